// The host check's judgement: the NTP-style offset from clock readings, the rules that stop a run, the
// table, and the start-instant correction the reports undo (aggregate.cpp).
#include "core/base/version.hpp"
#include "harness/plan/expand.hpp"
#include "harness/plan/plan.hpp"
#include "harness/records/host_check.hpp"
#include "harness/report/model/aggregate.hpp"

#include <catch2/catch.hpp>

namespace {

using harness::clock_reading;
using harness::host_check;

host_check reachable_host(double offset_ms, double bound_ms = 0.1) {
  host_check c;
  c.host = "i1";
  c.address = "198.18.0.2";
  c.reachable = true;
  c.netload_version = nb::version;
  c.facts = {{"type", "host_info"},
             {"version", nb::version},
             {"cpus", 4},
             {"cpus_allowed", 4},
             {"kernel", "Linux 5.10.0 x86_64"},
             {"features", {{"gso", true}, {"gro", true}, {"cbpf", true}, {"meminfo", true}}},
             {"mtu", {{"198.18.0.1", {{"mtu", 1500}, {"dev", "eth0"}}}}}};
  c.clock = harness::clock_offset{offset_ms, bound_ms, 8};
  return c;
}

}  // namespace

TEST_CASE("host check: the offset is the host's clock minus the midpoint of the shortest round trip") {
  // Host 2 s ahead; the second exchange has the shortest round trip (200 us) and is the one kept, however
  // asymmetric the slower ones were.
  const std::int64_t t = 1'800'000'000'000'000'000;
  const std::vector<clock_reading> r{{t, t + 2'000'000'000 + 900'000, t + 1'000'000},
                                     {t + 2'000'000, t + 2'002'000'000 + 100'000, t + 2'200'000},
                                     {t + 3'000'000, t + 2'003'000'000 + 50'000, t + 3'500'000}};
  const auto o = harness::estimate_offset(r);
  REQUIRE(o);
  CHECK(o->offset_ms == Approx(2000.0).margin(1e-6));
  CHECK(o->bound_ms == Approx(0.1).margin(1e-9));
  CHECK(o->exchanges == 3);
}

TEST_CASE("host check: no readings, or one answered before it was asked, give no offset") {
  CHECK_FALSE(harness::estimate_offset({}));
  CHECK_FALSE(harness::estimate_offset({{100, 150, 90}}));
}

TEST_CASE("host check: a clock off by more than the skew bound stops the run, unless --allow-offset") {
  auto off = reachable_host(2000.0);
  harness::judge(off, 20, false);
  REQUIRE(off.errors.size() == 1);
  CHECK_THAT(off.errors[0], Catch::Contains("+2000.0 ms") && Catch::Contains("--allow-offset"));

  auto allowed = reachable_host(2000.0);
  harness::judge(allowed, 20, true);
  CHECK(allowed.errors.empty());
  CHECK_THAT(allowed.notes.at(0), Catch::Contains("corrected"));

  auto unsure = reachable_host(25.0, 6.0);  // 19 ms is possible: not certainly off (a note: the bound is wide)
  harness::judge(unsure, 20, false);
  CHECK(unsure.errors.empty());
  CHECK(unsure.notes.size() == 1);

  auto fine = reachable_host(-19.0);
  harness::judge(fine, 20, false);
  CHECK(fine.errors.empty());
  CHECK(fine.notes.empty());
}

TEST_CASE("host check: another version is an error, a missing feature, a small MTU and a wide bound are notes") {
  auto c = reachable_host(0.5, 15.0);
  c.netserve_version = "0.1.0";
  c.facts["features"]["gso"] = false;
  c.facts["mtu"]["198.18.0.1"]["mtu"] = 1400;
  harness::judge(c, 20, false);
  REQUIRE(c.errors.size() == 1);
  CHECK_THAT(c.errors[0], Catch::Contains("netserve is version 0.1.0") && Catch::Contains("harness deploy"));
  CHECK(c.notes.size() == 3);

  auto unreachable = host_check{};
  unreachable.host = "gone";
  unreachable.errors.push_back("ssh failed: Connection refused");
  harness::judge(unreachable, 20, false);
  CHECK(unreachable.errors.size() == 1);  // nothing else can be known of it
  const std::string table = harness::check_table({unreachable, c});
  CHECK_THAT(table, Catch::Contains("error: host 'gone'") && Catch::Contains("NO") && Catch::Contains("-gso"));
}

TEST_CASE("host check: the JSON record reads back as written") {
  auto c = reachable_host(-3.25, 0.2);
  harness::judge(c, 20, false);
  const auto back = harness::host_check_from_json(harness::to_json(c));
  CHECK(back.host == c.host);
  CHECK(back.facts == c.facts);
  REQUIRE(back.clock);
  CHECK(back.clock->offset_ms == -3.25);
  CHECK(back.notes == c.notes);
}

TEST_CASE(
    "host check: a record missing a field or carrying an unknown one is an error naming both, and one from "
    "before the MTU warnings reads") {
  auto c = reachable_host(-3.25, 0.2);
  harness::judge(c, 20, false);
  const std::string where = "results/x/environment.json: host 'dev': check";
  auto j = harness::to_json(c);
  j.erase("warnings");  // written before the warnings existed
  CHECK(harness::host_check_from_json(j, where).warnings.empty());
  auto missing = j;
  missing.erase("reachable");
  CHECK_THROWS_WITH(harness::host_check_from_json(missing, where), where + ": field 'reachable' is missing");
  auto unknown = j;
  unknown["reachabel"] = true;
  CHECK_THROWS_WITH(harness::host_check_from_json(unknown, where), where + ": field 'reachabel' is not a known field");
  auto clock = j;
  clock["clock"].erase("bound_ms");
  CHECK_THROWS_WITH(harness::host_check_from_json(clock, where), where + ": clock: field 'bound_ms' is missing");
}

TEST_CASE("host check: facts of the wrong shape are named, never an exception", "[host_check]") {
  const auto good = reachable_host(0).facts;
  CHECK_FALSE(harness::facts_problem(good));
  auto f = good;
  f["cpus"] = "two";
  CHECK_THAT(harness::facts_problem(f).value_or(""), Catch::Contains("cpus"));
  f = good;
  f["mtu"]["198.18.0.1"]["mtu"] = "big";
  CHECK_THAT(harness::facts_problem(f).value_or(""), Catch::Contains("198.18.0.1"));
  f = good;
  f["features"]["gso"] = 1;
  CHECK_THAT(harness::facts_problem(f).value_or(""), Catch::Contains("gso"));
  CHECK(harness::facts_problem(nlohmann::json::array()));
  CHECK(harness::facts_problem({{"type", "other"}}));
  auto c = reachable_host(0);
  c.facts = f;
  harness::judge(c, 20, false);  // no exception, and the table still prints
  CHECK_NOTHROW(harness::check_table({c}));
}

TEST_CASE("host check: a test's datagrams too large for the path MTU measured there are a warning", "[host_check]") {
  const std::string text = R"([defaults]
ports = [0]
[hosts]
dev = { address = "198.18.0.2" }
i1 = { address = "198.19.0.2" }
v6 = { address = "fd00::2" }
[[tests]]
name = "bps"
message_size = [64, 1473]
topology = "fan-in"
server = "dev"
clients = ["i1"]
[[tests]]
name = "rev"
message_size = 1453
reverse = true
topology = "fan-in"
server = "i1"
clients = ["v6"]
[[tests]]
name = "tcp"
kind = "TCP_STREAM"
message_size = 9000
topology = "fan-in"
server = "dev"
clients = ["v6"]
)";
  const auto p = harness::parse_plan(text, "mtu.toml");
  const auto payloads = harness::udp_payloads_per_host(p, harness::expand(p));
  CHECK(payloads.at("i1").at("198.18.0.2").bytes == 1473);
  CHECK(payloads.at("i1").at("198.18.0.2").test == "bps");
  CHECK(payloads.at("i1").at("fd00::2").bytes == 1453);  // reverse: the server sends
  CHECK_FALSE(payloads.count("dev"));                    // TCP segments by the MSS: nothing to judge

  auto c = reachable_host(0.1);
  c.facts["mtu"] = {{"198.18.0.2", {{"mtu", 1500}, {"dev", "ec-e0"}}}};
  harness::judge_payloads(c, payloads.at("i1"));
  REQUIRE(c.warnings.size() == 1);
  CHECK_THAT(c.warnings[0], Catch::Contains("test 'bps' sends 1473-byte UDP datagrams to 198.18.0.2") &&
                                Catch::Contains("path MTU there is 1500") && Catch::Contains("at most 1472 bytes"));
  CHECK_THAT(harness::check_table({c}), Catch::Contains("warning: host 'i1': test 'bps'"));
  CHECK(harness::host_check_from_json(harness::to_json(c)).warnings == c.warnings);

  auto fits = reachable_host(0.1);
  fits.facts["mtu"] = {{"198.18.0.2", {{"mtu", 1501}, {"dev", "ec-e0"}}}};
  harness::judge_payloads(fits, payloads.at("i1"));
  CHECK(fits.warnings.empty());

  auto v6 = reachable_host(0.1);  // IPv6 headers are 48 bytes: 1453 + 48 = 1501
  v6.facts["mtu"] = {{"198.18.0.2", {{"mtu", 1501}, {"dev", "eth0"}}}, {"fd00::2", {{"mtu", 1500}, {"dev", "eth0"}}}};
  harness::judge_payloads(v6, payloads.at("i1"));
  REQUIRE(v6.warnings.size() == 1);
  CHECK_THAT(v6.warnings[0], Catch::Contains("test 'rev'") && Catch::Contains("48 of headers"));
}
