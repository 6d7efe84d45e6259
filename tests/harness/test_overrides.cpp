// The command line's overrides of a plan (--duration, --repeats, --only): applied to every test, an
// unknown test named with the plan's tests, and the plan's text rewritten so that the results folder's
// plan.toml is the plan as it ran.
#include "harness/plan/expand.hpp"
#include "harness/plan/overrides.hpp"
#include "harness/plan/plan.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include <string>

using harness::apply_overrides;
using harness::parse_plan;
using harness::plan_overrides;

namespace {

const std::string two_tests = R"(name = "ov"
[defaults]
duration = 300   # five minutes
warmup = 10
ports = [0, 0]

[hosts]
dev = { address = "127.0.0.1" }
a = { address = "127.0.0.2" }

# the packet-rate test
[[tests]]
name = "pps"
message_size = 1
duration = 60
topology = "fan-in"
server = "dev"
clients = ["a"]

[[tests]]
name = "bps"
message_size = 1400
repeats = 3
topology = "fan-in"
server = "dev"
clients = ["a"]

[[tests]]
name = "ndr"
message_size = 64
search = { loss = [0.0], trial = 2, final = 30 }
topology = "fan-in"
server = "dev"
clients = ["a"]
)";

// The plan the rewritten text describes, parsed afresh (comments and all).
harness::plan reparsed(const harness::plan& p) { return parse_plan(p.source_text, "copy.toml"); }

}  // namespace

TEST_CASE("overrides: --duration sets every test, halves a long warmup, and a search's finals",
          "[harness][overrides]") {
  auto p = parse_plan(two_tests, "ov.toml");
  plan_overrides o;
  o.duration = 4;
  const auto changes = apply_overrides(p, o);
  for (const auto& t : p.tests) {
    CHECK(t.duration == 4);
    CHECK(t.warmup == 2);  // 10 s of warmup would leave nothing of 4
  }
  REQUIRE(p.tests[2].search);
  CHECK(p.tests[2].search->goals.at(0).final_trial_duration == 4);
  CHECK(p.tests[2].search->goals.at(0).initial_trial_duration == 2);
  CHECK(p.tests[2].search->goals.at(0).duration_sum == 4);  // the older form: its final trial is its duration sum
  for (const auto& r : harness::expand(p)) CHECK(r.duration == 4);
  REQUIRE(changes.size() == 3);
  CHECK_THAT(changes[1], Catch::Contains("duration 60, 300 s -> 4 s"));
  CHECK_THAT(changes[2], Catch::Contains("warmup 10 s -> 2 s"));
  // The copy tells the truth: its values are the ones that ran, its comments stay, a header says why.
  const auto back = reparsed(p);
  for (const auto& t : back.tests) {
    CHECK(t.duration == 4);
    CHECK(t.warmup == 2);
  }
  CHECK(back.tests[2].search->goals.at(0).final_trial_duration == 4);
  CHECK_THAT(p.source_text,
             Catch::StartsWith("# The plan as it ran: the command line's --duration 4 changed ov.toml:"));
  CHECK_THAT(p.source_text, Catch::Contains("duration = 4   # five minutes") &&
                                Catch::Contains("# the packet-rate test") &&
                                Catch::Contains("The values below are rewritten to match"));
  CHECK(p.overrides == changes);
  CHECK(p.override_options == "--duration 4");
}

TEST_CASE("overrides: a duration that is not a finite number in range is refused", "[harness][overrides]") {
  for (double d : {std::nan(""), 0.05, 1e9}) {
    auto p = parse_plan(two_tests, "ov.toml");
    plan_overrides o;
    o.duration = d;
    CHECK_THROWS_WITH(apply_overrides(p, o), Catch::Contains("0.1 to 86400 seconds"));
  }
}

TEST_CASE("overrides: --repeats and --only keep the tests named, the copy comments the others out",
          "[harness][overrides]") {
  auto p = parse_plan(two_tests, "ov.toml");
  plan_overrides o;
  o.repeats = 2;
  o.only = {"bps,ndr"};
  apply_overrides(p, o);
  REQUIRE(p.tests.size() == 2);
  CHECK(p.tests[0].name == "bps");
  CHECK(p.tests[0].repeats == 2);
  CHECK(p.tests[1].repeats == 2);
  const auto back = reparsed(p);
  REQUIRE(back.tests.size() == 2);
  CHECK(back.tests[0].name == "bps");
  CHECK(back.tests[0].repeats == 2);  // the file's 3, rewritten
  CHECK(back.tests[1].repeats == 2);  // from [defaults], added there
  CHECK_THAT(p.source_text, Catch::Contains("# name = \"pps\"") && Catch::Contains("tests left out (--only): pps"));
  // --only given twice is the same as a comma list.
  auto twice = parse_plan(two_tests, "ov.toml");
  o.only = {"bps", "ndr"};
  apply_overrides(twice, o);
  CHECK(twice.tests.size() == 2);
}

TEST_CASE("overrides: --only of a test the plan does not have names the plan's tests", "[harness][overrides]") {
  auto p = parse_plan(two_tests, "ov.toml");
  plan_overrides o;
  o.only = {"pps,ppz"};
  CHECK_THROWS_WITH(apply_overrides(p, o), Catch::Contains("--only ppz") && Catch::Contains("no test of that name") &&
                                               Catch::Contains("its tests: pps, bps, ndr"));
  o.only = {"pps,"};
  CHECK_THROWS_WITH(apply_overrides(p, o), Catch::Contains("an empty test name"));
}

TEST_CASE("overrides: a plan without a defaults table gets one, and no overrides leave the text alone",
          "[harness][overrides]") {
  const std::string bare = R"([hosts]
dev = { address = "127.0.0.1" }
[[tests]]
name = "t"
message_size = 1
topology = "fan-in"
server = "dev"
clients = ["dev"]
ports = [0])";  // no newline at the end
  auto p = parse_plan(bare, "bare.toml");
  apply_overrides(p, {});
  CHECK(p.source_text == bare);
  plan_overrides o;
  o.duration = 1.5;
  apply_overrides(p, o);
  const auto back = reparsed(p);
  CHECK(back.duration == 1.5);
  CHECK(back.warmup == 0.75);
  CHECK(back.tests[0].duration == 1.5);
}

TEST_CASE("overrides: a layout the rewrite does not know keeps the file's text, and says it is not what ran",
          "[harness][overrides]") {
  // Inline tests: a left-out test is not whole lines to comment out.
  const std::string inline_tests = R"(tests = [
  { name = "a", message_size = 1, topology = "fan-in", server = "dev", clients = ["dev"], ports = [0] },
  { name = "b", message_size = 1, topology = "fan-in", server = "dev", clients = ["dev"], ports = [0] } ]
[hosts]
dev = { address = "127.0.0.1" }
)";
  auto p = parse_plan(inline_tests, "inline.toml");
  plan_overrides o;
  o.only = {"b"};
  apply_overrides(p, o);
  CHECK(p.tests.size() == 1);
  CHECK_THAT(p.source_text, Catch::Contains("NOT what ran") && Catch::Contains("tests left out (--only): a") &&
                                Catch::EndsWith(inline_tests));
}
