// The fuzz corpora's seeds are valid inputs of today's formats: a seed the parser refuses (an old
// protocol version, a renamed field) only exercises the first check, and fuzzing from it finds little.
// The seeds are the named files; regression_* are inputs that once crashed, kept to be refused, and
// files named by their SHA-1 are what fuzzing found and merged in (scripts/fuzz), valid or not.
#include "core/result/result.hpp"
#include "core/wire/iperf3/iperf3_wire.hpp"
#include "core/wire/native/protocol.hpp"
#include "core/wire/netperf/netperf_wire.hpp"
#include "tests/fuzz/iperf3_client_transcript.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::vector<std::pair<std::string, std::string>> seeds(const char* corpus) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : fs::directory_iterator(fs::path(NETBENCH_FUZZ_DIR) / corpus)) {
    const std::string name = e.path().filename().string();
    const bool found_by_fuzzing = name.size() == 40 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (name.starts_with("regression_") || found_by_fuzzing) continue;
    std::ifstream in(e.path(), std::ios::binary);
    out.emplace_back(name, std::string{std::istreambuf_iterator<char>(in), {}});
  }
  return out;
}

}  // namespace

TEST_CASE("fuzz seeds: every control protocol seed is a sequence of valid frames", "[fuzz]") {
  for (const auto& [name, bytes] : seeds("corpus_protocol")) {
    INFO(name);
    std::size_t pos = 0, frames = 0;
    while (pos < bytes.size()) {
      REQUIRE(bytes.size() - pos >= nb::frame_header_size);
      unsigned char header[nb::frame_header_size];
      std::memcpy(header, bytes.data() + pos, sizeof header);
      const std::size_t len = nb::decode_frame_length(header);
      pos += nb::frame_header_size;
      REQUIRE(len <= bytes.size() - pos);
      CHECK_NOTHROW(nb::decode_payload(std::string_view(bytes).substr(pos, len)));
      pos += len;
      ++frames;
    }
    CHECK(frames > 0);
  }
}

TEST_CASE("fuzz seeds: every result seed reads as a test result", "[fuzz]") {
  for (const auto& [name, text] : seeds("corpus_result")) {
    INFO(name);
    CHECK_NOTHROW(nb::result_from_json(nlohmann::json::parse(text)));
  }
}

TEST_CASE("fuzz seeds: every iperf3 seed is what a 3.12 client or netserve sends", "[fuzz]") {
  for (const auto& [name, text] : seeds("corpus_iperf3")) {
    INFO(name);
    if (name.starts_with("params_")) {
      const auto p = nb::iperf3::parse_params(text);
      CHECK(p.unknown.empty());
    } else {
      CHECK_NOTHROW(nb::iperf3::parse_results(text));
    }
  }
}

TEST_CASE("fuzz seeds: every netperf seed is a block a netperf 2.7 client, netserver or netserve sent", "[fuzz]") {
  namespace np = nb::netperf;
  for (const auto& [name, bytes] : seeds("corpus_netperf")) {
    INFO(name);
    if (name.starts_with("session_")) {  // a control connection's bytes: whole blocks, its requests decode
      REQUIRE(bytes.size() % np::message_size == 0);
      REQUIRE(bytes.size() > np::message_size);
      for (std::size_t at = 0; at < bytes.size(); at += np::message_size) {
        np::block b{};
        std::memcpy(b.data(), bytes.data() + at, b.size());
        if (np::decode_header(b).type == np::type_request) CHECK_NOTHROW(np::decode_request(b));
      }
      continue;
    }
    REQUIRE(bytes.size() == np::message_size);
    np::block b{};
    std::memcpy(b.data(), bytes.data(), b.size());
    if (name.starts_with("request_")) {
      CHECK_NOTHROW(np::decode_request(b));
    } else if (name.starts_with("setup_")) {
      CHECK_NOTHROW(np::decode_setup(b));
    } else if (name.starts_with("results_")) {
      CHECK_NOTHROW(np::decode_results(b));
    } else {
      CHECK(name.starts_with("refusal_"));
      CHECK(np::decode_header(b).value != 0);
    }
  }
}

TEST_CASE("fuzz seeds: every iperf3 client seed is what a 3.12 server sends netload, whole or refused", "[fuzz]") {
  for (const auto& [name, bytes] : seeds("corpus_iperf3_client")) {
    INFO(name);
    const nb::iperf3::transcript t = nb::iperf3::read_transcript(bytes);
    if (name.starts_with("refused_")) {
      CHECK_THAT(t.error, Catch::Matchers::StartsWith("iperf3 server"));
      continue;
    }
    CHECK(t.error.empty());
    CHECK(t.setup_states == 3);
    CHECK(t.results.figures.streams.size() == 1);
    if (name.find("_json_") != std::string::npos) CHECK(t.results.version == "iperf3 3.12");
  }
}

TEST_CASE("fuzz seeds: the iperf3 client regressions end at the state out of its place, naming it", "[fuzz]") {
  const auto read = [](const char* file) {
    std::ifstream in(fs::path(NETBENCH_FUZZ_DIR) / "corpus_iperf3_client" / file, std::ios::binary);
    return nb::iperf3::read_transcript(std::string{std::istreambuf_iterator<char>(in), {}});
  };
  const nb::iperf3::transcript again = read("regression_create_streams_repeated.bin");
  CHECK(again.error == "iperf3 server sent CREATE_STREAMS a second time");
  CHECK(again.streams_created == 1);
  CHECK(read("regression_test_start_flood.bin").error == "iperf3 server sent TEST_START a second time");
  CHECK(read("regression_test_start_after_running.bin").error ==
        "iperf3 server sent TEST_START after TEST_END, where EXCHANGE_RESULTS comes");
}
