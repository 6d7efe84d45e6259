// What each host was doing during a real test on 127.0.0.1, the verdict, and netperf's -c / -C.
#include "core/result/result.hpp"
#include "tests/integration/netserve_fixture.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>

using nb::test::netload_argv;
using nb::test::netserve_process;
using nlohmann::json;

namespace {

void check_host(const json& h, double seconds) {
  INFO(h.dump());
  REQUIRE(h.is_object());
  CHECK(h["cpus"].get<int>() >= 1);
  CHECK(h["cpu"]["per_cpu"].size() >= 1);
  // From the start instant to the end of the data: about the test's length, not the lead before it.
  CHECK(h["window_s"].get<double>() > seconds * 0.9);
  CHECK(h["window_s"].get<double>() < seconds + 1.0);
  CHECK(h["process"]["cpu_s"].get<double>() > 0);
  double total = 0;
  for (const char* k : {"user_pct", "system_pct", "softirq_pct", "irq_pct", "idle_pct", "steal_pct"})
    total += h["cpu"][k].get<double>();
  CHECK(total == Approx(100).margin(0.1));
  // The datagrams crossed lo, and the host counted them there.
  auto lo =
      std::find_if(h["interfaces"].begin(), h["interfaces"].end(), [](const json& i) { return i["name"] == "lo"; });
  REQUIRE(lo != h["interfaces"].end());
  CHECK((*lo)["rx_packets"].get<std::uint64_t>() > 0);
}

// Ran and reconciles: 0, or 4 when a loaded machine kept the paced sender from its target (the hosts
// and the verdict are there all the same, and say so).
bool ran(const nb::test::completed& c) { return c.status == 0 || c.status == 4; }

}  // namespace

TEST_CASE("a result carries both hosts and a verdict - forward and reverse", "[integration][hosts]") {
  netserve_process server(1);
  for (bool reverse : {false, true}) {
    std::vector<std::string> global{"--json", "--pps", "20000"};
    if (reverse) global.push_back("--reverse");
    auto c = nb::test::run(netload_argv(server.port(), "UDP_STREAM", 1, global, {"-m", "64"}));
    INFO("reverse " << reverse << ": " << c.err);
    REQUIRE(ran(c));
    json r = json::parse(c.out);
    check_host(r["hosts"]["sender"], 1);
    check_host(r["hosts"]["receiver"], 1);
    const auto& limits = nb::verdict_limits;
    CHECK(std::find(std::begin(limits), std::end(limits), r["verdict"]["limit"].get<std::string>()) !=
          std::end(limits));
    CHECK_FALSE(r["verdict"]["text"].get<std::string>().empty());
    CHECK(nb::result_from_json(r).hosts.receiver.has_value());  // the harness reads it back
  }
}

TEST_CASE("netperf's -c and -C print each host's CPU and service demand - the Limit line is always there",
          "[integration][hosts][output]") {
  netserve_process server(1);
  auto c = nb::test::run(netload_argv(server.port(), "UDP_STREAM", 1, {"-c", "-C", "--pps", "20000"}, {"-m", "64"}));
  INFO(c.err);
  REQUIRE(ran(c));
  CHECK_THAT(c.out, Catch::Contains("CPU local   sender host "));
  CHECK_THAT(c.out, Catch::Contains("CPU remote  receiver host "));
  CHECK_THAT(c.out, Catch::Contains("% of a core"));
  CHECK_THAT(c.out, Catch::Contains("            service demand "));
  CHECK_THAT(c.out, Catch::Contains("\nLimit       "));

  c = nb::test::run(netload_argv(server.port(), "TCP_STREAM", 1, {"-C", "--reverse"}, {"-m", "64K"}));
  INFO(c.err);
  REQUIRE(ran(c));
  CHECK_THAT(c.out, !Catch::Contains("CPU local"));
  CHECK_THAT(c.out, Catch::Contains("CPU remote  sender host "));
  CHECK_THAT(c.out, Catch::Contains("netserve"));

  c = nb::test::run(netload_argv(server.port(), "UDP_STREAM", 1, {"--pps", "20000"}, {"-m", "64"}));
  REQUIRE(ran(c));
  CHECK_THAT(c.out, !Catch::Contains("CPU local") && !Catch::Contains("CPU remote"));
  CHECK_THAT(c.out, Catch::Contains("\nLimit       "));
}
