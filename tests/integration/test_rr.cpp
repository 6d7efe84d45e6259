// UDP_RR and TCP_RR between the real programs on 127.0.0.1: every request answered and timed once, the
// two sides' counts equal, the latency figures from the histogram the result carries.
#include "core/result/latency_histogram.hpp"
#include "tests/integration/netserve_fixture.hpp"
#include "tests/integration/reconciles.hpp"

#include <catch2/catch.hpp>

using nb::test::netload_argv;
using nb::test::netserve_process;
using nlohmann::json;

namespace {

json run_rr(std::uint16_t port, const std::string& test, std::vector<std::string> global,
            std::vector<std::string> opts) {
  global.push_back("--json");
  auto c = nb::test::run(netload_argv(port, test, 1, global, opts));
  INFO("stderr: " << c.err);
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  return json::parse(c.out);
}

// On loopback nothing is lost: requests sent = received = answers sent = transactions timed.
void require_every_transaction(const json& r, std::uint32_t request, std::uint32_t response, std::uint32_t burst) {
  nb::test::require_reconciles(r);
  const json& rr = r["rr"];
  const auto sent = r["sender"]["packets"].get<std::uint64_t>();
  CHECK(rr["request_size"] == request);
  CHECK(rr["response_size"] == response);
  CHECK(rr["burst"] == burst);
  CHECK(r["receiver"]["packets"] == sent);
  CHECK(rr["responses_sent"] == sent);
  CHECK(rr["transactions"] == sent);
  CHECK(rr["responses_lost"] == 0);
  CHECK(rr["timeouts"] == 0);
  CHECK(r["sender"]["bytes"] == sent * request);
  const auto h = nb::latency_histogram::from_json(rr["histogram"]);
  CHECK(h.count() == sent);
  CHECK(rr["latency"]["count"] == sent);
  CHECK(rr["latency"]["p50_us"].get<double>() > 0);
  CHECK(rr["latency"]["p50_us"].get<double>() <= rr["latency"]["p99_us"].get<double>());
  CHECK(rr["latency"]["p99_us"].get<double>() <= rr["latency"]["max_us"].get<double>());
}

}  // namespace

TEST_CASE("UDP_RR: every request answered and timed, numbered answers and netperf's 1-byte ones", "[integration][rr]") {
  netserve_process server(1);
  SECTION("64-byte requests, 1000-byte answers, four in flight, two streams") {
    json r = run_rr(server.port(), "UDP_RR", {"--streams", "2", "--burst", "3", "--pps", "4000"}, {"-r", "64,1000"});
    require_every_transaction(r, 64, 1000, 3);
  }
  SECTION("netperf's default: 1 byte each way, one in flight") {
    json r = run_rr(server.port(), "UDP_RR", {"--pps", "2000"}, {});
    require_every_transaction(r, 1, 1, 0);
  }
}

TEST_CASE("TCP_RR: every request answered and timed, with a burst, answers larger than a segment",
          "[integration][rr]") {
  netserve_process server(1);
  json r = run_rr(server.port(), "TCP_RR", {"--burst", "4", "--interval", "0.5"}, {"-r", "200,20000"});
  require_every_transaction(r, 200, 20000, 4);
  // Each interval times its own transactions, and together they are the test's.
  std::uint64_t timed = 0;
  for (const json& i : r["intervals"]) timed += i["latency"]["count"].get<std::uint64_t>();
  CHECK(timed == r["rr"]["transactions"].get<std::uint64_t>());
}
