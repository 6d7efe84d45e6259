#include "core/wire/iperf3/iperf3_client.hpp"

#include "core/json/json_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>

namespace nb::iperf3 {

namespace {

// iperf_error.c's words.
std::string error_text(std::int32_t code) {
  switch (static_cast<error>(code)) {
    case error::duration: return "test duration too long";
    case error::num_streams: return "number of parallel streams too large";
    case error::block_size: return "block size too large";
    case error::buf_size: return "socket buffer size too large";
    case error::mss: return "TCP MSS too large";
    case error::unimplemented: return "an option you are trying to set is not implemented yet";
    case error::udp_block_size: return "block size invalid";
    case error::set_congestion: return "unable to set TCP_CONGESTION";
    case error::auth_test: return "test authorization failed";
    case error::stream_accept: return "unable to accept stream connection";
    default: return fmt::format("iperf3 error code {}", code);
  }
}

// Only -J output says them: "iperf 3.12" becomes "iperf3 3.12".
void read_own_output(const nlohmann::json& j, server_results& out) {
  const auto own = j.find("server_output_json");
  if (own == j.end() || !own->is_object()) return;
  const auto start = own->find("start");
  if (start == own->end() || !start->is_object()) return;
  if (const auto v = start->find("version"); v != start->end() && v->is_string()) {
    out.version = v->get<std::string>();
    if (out.version.rfind("iperf ", 0) == 0) out.version = "iperf3 " + out.version.substr(6);
  }
  const auto buffer = [&](const char* name) -> std::int32_t {
    const auto b = start->find(name);
    if (b == start->end() || !b->is_number_integer()) return 0;
    const auto v = b->get<std::int64_t>();
    return v > 0 && v <= std::numeric_limits<std::int32_t>::max() ? static_cast<std::int32_t>(v) : 0;
  };
  out.rcvbuf = buffer("rcvbuf_actual");
  out.sndbuf = buffer("sndbuf_actual");
}

constexpr const char* setup_order[] = {"CREATE_STREAMS", "TEST_START", "TEST_RUNNING"};

}  // namespace

std::string state_name(signed char s) {
  switch (static_cast<state>(s)) {
    case state::test_start: return "TEST_START";
    case state::test_running: return "TEST_RUNNING";
    case state::test_end: return "TEST_END";
    case state::param_exchange: return "PARAM_EXCHANGE";
    case state::create_streams: return "CREATE_STREAMS";
    case state::server_terminate: return "SERVER_TERMINATE";
    case state::client_terminate: return "CLIENT_TERMINATE";
    case state::exchange_results: return "EXCHANGE_RESULTS";
    case state::display_results: return "DISPLAY_RESULTS";
    case state::iperf_done: return "IPERF_DONE";
    case state::access_denied: return "ACCESS_DENIED";
    case state::server_error: return "SERVER_ERROR";
  }
  return fmt::format("state {} (no iperf3 state)", int{s});
}

bool is_refusal(signed char s) noexcept {
  const auto st = static_cast<state>(s);
  return st == state::access_denied || st == state::server_error || st == state::server_terminate;
}

std::string refusal_text(signed char s, std::int32_t code) {
  if (static_cast<state>(s) == state::access_denied)
    return "iperf3 server: the server is busy running a test (ACCESS_DENIED)";
  if (static_cast<state>(s) == state::server_terminate) return "iperf3 server: the server terminated the test";
  return fmt::format("iperf3 server refused the test: {}", error_text(code));
}

setup_states::step setup_states::take(signed char s) {
  const std::string name = state_name(s);
  if (taken_ < 3 && name == setup_order[taken_]) {
    ++taken_;
    return taken_ == 1 ? step::create_streams : taken_ == 2 ? step::wait : step::run;
  }
  for (int i = 0; i < taken_; ++i)
    if (name == setup_order[i]) throw protocol_error(fmt::format("iperf3 server sent {} a second time", name));
  if (taken_ == 3) throw protocol_error(fmt::format("iperf3 server sent {} after TEST_RUNNING", name));
  throw protocol_error(fmt::format("iperf3 server sent {} after {}, where {} comes", name,
                                   taken_ ? last() : "the parameters", awaited()));
}

const char* setup_states::awaited() const noexcept { return taken_ < 3 ? setup_order[taken_] : ""; }

const char* setup_states::last() const noexcept { return taken_ ? setup_order[taken_ - 1] : ""; }

void expect_state(signed char s, state want, std::string_view where) {
  if (static_cast<state>(s) != want)
    throw protocol_error(fmt::format("iperf3 server sent {} {}, where {} comes", state_name(s), where,
                                     state_name(static_cast<signed char>(want))));
}

server_results read_server_results(std::string_view json, std::size_t streams) {
  if (json.size() > max_server_results_size)
    throw protocol_error(fmt::format("iperf3 results of {} bytes, more than {}", json.size(), max_server_results_size));
  bool too_deep = false;
  nlohmann::json j = parse_json_bounded(json, max_json_depth, &too_deep);
  if (j.is_discarded())
    throw protocol_error(fmt::format("iperf3 results: {}", too_deep ? "nested too deep" : "not JSON"));
  if (!j.is_object()) throw protocol_error("iperf3 results: not a JSON object");
  server_results out;
  read_own_output(j, out);
  // The figures are the results' own, not the server's output's.
  j.erase("server_output_json");
  j.erase("server_output_text");
  out.figures = parse_results(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (out.figures.streams.size() != streams)
    throw protocol_error(fmt::format("iperf3 results: {} streams, not {}", out.figures.streams.size(), streams));
  return out;
}

}  // namespace nb::iperf3
