// netload --bidir against a real netserve on 127.0.0.1: both directions run at one start instant, each
// reconciles on its own, and the output says which is which.
#include "tests/integration/netserve_fixture.hpp"
#include "tests/integration/reconciles.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

using nb::test::netload_argv;
using nb::test::netserve_process;
using nb::test::require_reconciles;
using nlohmann::json;

namespace {

nb::test::completed run_bidir(std::uint16_t port, const std::string& test, std::vector<std::string> global,
                              std::vector<std::string> test_opts = {}) {
  global.insert(global.begin(), "--bidir");
  auto c = nb::test::run(netload_argv(port, test, 1, global, test_opts));
  INFO("stdout: " << c.out << "\nstderr: " << c.err);
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  return c;
}

// Both directions ran, reconciled, carried traffic, and started at one instant: their intervals are
// aligned on the same wall-clock boundaries, and each sender started at or after it.
void require_both_ways(const json& j) {
  REQUIRE(j["bidir"] == true);
  const json& f = j["forward"];
  const json& r = j["reverse"];
  require_reconciles(f);
  require_reconciles(r);
  CHECK(f["reverse"] == false);
  CHECK(r["reverse"] == true);
  CHECK(f["receiver"]["packets"].get<std::uint64_t>() > 0);
  CHECK(r["receiver"]["packets"].get<std::uint64_t>() > 0);
  REQUIRE(!f["intervals"].empty());
  REQUIRE(!r["intervals"].empty());
  CHECK(f["intervals"][0]["start_ns"] == r["intervals"][0]["start_ns"]);
  const double t0 = j["start_instant"].get<double>();
  for (const json* d : {&f, &r}) {
    const double started = (*d)["actual_start"].get<double>();
    CHECK(started >= t0 - 0.001);
    CHECK(started < t0 + 0.5);  // both sending within the one-second test: at overlapping times
  }
}

}  // namespace

TEST_CASE("netload --bidir: paced UDP_STREAM both ways at once, each direction reconciling",
          "[integration][udp][bidir]") {
  netserve_process server(1);
  auto c = run_bidir(server.port(), "UDP_STREAM", {"--pps", "2000", "--interval", "0.5", "--json"}, {"-m", "200"});
  const json j = json::parse(c.out);
  require_both_ways(j);
  // --pps applies to each direction.
  CHECK(j["forward"]["options"]["pps"] == 2000);
  CHECK(j["reverse"]["options"]["pps"] == 2000);
  CHECK(j["forward"]["sender"]["packets"].get<std::uint64_t>() > 1000);
  CHECK(j["reverse"]["sender"]["packets"].get<std::uint64_t>() > 1000);
  // netserve saw two tests on its one port.
  CHECK(server.wait_logged(server.port(), 2).size() == 2);
}

TEST_CASE("netload --bidir: TCP_STREAM both ways at once, each direction reconciling", "[integration][tcp][bidir]") {
  netserve_process server(1);
  auto c = run_bidir(server.port(), "TCP_STREAM", {"--rate", "200M", "--interval", "0.5", "--json"}, {"-m", "64K"});
  require_both_ways(json::parse(c.out));
}

TEST_CASE("netload --bidir: tables per direction with a sum, JSON lines tagged with the direction",
          "[integration][bidir]") {
  netserve_process server(1);
  auto table = run_bidir(server.port(), "UDP_STREAM", {"--pps", "1000", "--interval", "0.5"}, {"-m", "100"});
  CHECK_THAT(table.out, Catch::Contains("Forward: netload sends"));
  CHECK_THAT(table.out, Catch::Contains("Reverse: netserve sends"));
  CHECK_THAT(table.out, Catch::Contains("Both ways   sent"));
  auto stream = run_bidir(server.port(), "UDP_STREAM", {"--pps", "1000", "--json-stream"}, {"-m", "100"});
  std::istringstream lines(stream.out);
  std::map<std::string, int> intervals, results;
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line);
    if (e["type"] == "interval") ++intervals[e.at("direction").get<std::string>()];
    if (e["type"] == "result") {
      ++results[e.at("direction").get<std::string>()];
      require_reconciles(e);
    }
  }
  CHECK(intervals["forward"] >= 1);
  CHECK(intervals["reverse"] >= 1);
  CHECK(results == std::map<std::string, int>{{"forward", 1}, {"reverse", 1}});
  auto refused = nb::test::run(netload_argv(server.port(), "UDP_STREAM", 1, {"--bidir", "--reverse"}, {}));
  CHECK(refused.status == 2);
  CHECK_THAT(refused.err, Catch::Contains("give --bidir or --reverse, not both"));
}
