// The host check's judgement: the NTP-style offset from clock readings, the rules that stop a run, the
// table, and the start-instant correction the reports undo (aggregate.cpp).
#include "core/version.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/run/host_check.hpp"

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
  c.facts = {{"type", "host_info"}, {"version", nb::version}, {"cpus", 4}, {"cpus_allowed", 4}, {"kernel", "Linux 5.10.0 x86_64"},
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

TEST_CASE("host check: facts of the wrong shape are named, never an exception", "[host_check]") {
  const auto good = reachable_host(0).facts;
  CHECK(harness::facts_problem(good).empty());
  auto f = good;
  f["cpus"] = "two";
  CHECK_THAT(harness::facts_problem(f), Catch::Contains("cpus"));
  f = good;
  f["mtu"]["198.18.0.1"]["mtu"] = "big";
  CHECK_THAT(harness::facts_problem(f), Catch::Contains("198.18.0.1"));
  f = good;
  f["features"]["gso"] = 1;
  CHECK_THAT(harness::facts_problem(f), Catch::Contains("gso"));
  CHECK_FALSE(harness::facts_problem(nlohmann::json::array()).empty());
  CHECK_FALSE(harness::facts_problem({{"type", "other"}}).empty());
  auto c = reachable_host(0);
  c.facts = f;
  harness::judge(c, 20, false);  // no exception, and the table still prints
  CHECK_NOTHROW(harness::check_table({c}));
}
