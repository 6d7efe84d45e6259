// A test's `search` in a plan: MLRsearch's goals by RFC 9971's names, CSIT's goals by default, the older
// form mapped onto goals, and every mistake named at its file:line:col.
#include "harness/plan/overrides.hpp"
#include "harness/plan/plan.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace {

using nb::search::goal;

// A fan-in UDP test of two instances; `search` goes on line 15 of the file.
std::string search_plan(const std::string& extra) {
  return "[defaults]\nduration = 2\nports = [0, 0]\n\n[hosts]\ndev = { address = \"127.0.0.1\" }\n"
         "a = { address = \"127.0.0.2\" }\nb = { address = \"127.0.0.3\" }\n"
         "[[tests]]\nname = \"t\"\nmessage_size = 1\ntopology = \"fan-in\"\nserver = \"dev\"\nclients = [\"a\", \"b\"]\n" +
         extra;
}

std::string search_error(const std::string& text) {
  try {
    harness::parse_plan(text, "plan.toml");
  } catch (const harness::plan_error& e) {
    return e.what();
  }
  return "";
}

void check_goal(const goal& g, const std::string& name, double loss, double exceed, double final_s, double sum,
                double width, double initial) {
  INFO(g.name);
  CHECK(g.name == name);
  CHECK(g.loss_ratio == loss);
  CHECK(g.exceed_ratio == exceed);
  CHECK(g.final_trial_duration == final_s);
  CHECK(g.duration_sum == sum);
  CHECK(g.width == width);
  CHECK(g.initial_trial_duration == initial);
}

}  // namespace

TEST_CASE("plan search: CSIT's NDR and PDR goals by default", "[harness][plan][search]") {
  const auto s = harness::parse_plan(search_plan("search = {}\n"), "plan.toml").tests.at(0).search;
  REQUIRE(s);
  REQUIRE(s->goals.size() == 2);
  check_goal(s->goals[0], "NDR", 0, 0.5, 1, 21, 0.005, 1);
  check_goal(s->goals[1], "PDR", 0.005, 0.5, 1, 21, 0.005, 1);
  CHECK_FALSE(s->older_form);
  CHECK(s->max_trials == 200);
}

TEST_CASE("plan search: goals by RFC 9971's parameter names, inline or as [[tests.search.goals]]",
          "[harness][plan][search]") {
  const auto inline_goals = harness::parse_plan(
      search_plan(
          "search = { goals = [ { name = \"NDR\", loss_ratio = 0.0 }, { name = \"PDR\", loss_ratio = 0.005, "
          "exceed_ratio = 0.5, final_trial_duration = 2, duration_sum = 10, width = 0.01, initial_trial_duration = 0.5 } ], "
          "max_trials = 40 }\n"),
      "plan.toml");
  const auto& s = *inline_goals.tests.at(0).search;
  REQUIRE(s.goals.size() == 2);
  check_goal(s.goals[0], "NDR", 0, 0.5, 1, 21, 0.005, 1);
  check_goal(s.goals[1], "PDR", 0.005, 0.5, 2, 10, 0.01, 0.5);
  CHECK(s.max_trials == 40);
  const auto tables = harness::parse_plan(
      search_plan("[tests.search]\nmax_trials = 50\n[[tests.search.goals]]\nloss_ratio = 0.001\nwidth = 0.02\n"
                  "[[tests.search.goals]]\nname = \"loose\"\nloss_ratio = 0.01\nfinal_trial_duration = 3\n"),
      "plan.toml");
  const auto& t = *tables.tests.at(0).search;
  REQUIRE(t.goals.size() == 2);
  check_goal(t.goals[0], "loss ratio 0.001", 0.001, 0.5, 1, 21, 0.02, 1);
  check_goal(t.goals[1], "loose", 0.01, 0.5, 3, 21, 0.005, 1);
  CHECK(t.max_trials == 50);
}

TEST_CASE("plan search: the older form maps onto goals", "[harness][plan][search]") {
  // loss % -> loss_ratio; trial -> initial_trial_duration; final -> final_trial_duration and duration_sum
  // (one full-length trial at the rate, none there over the target: exceed_ratio 0); precision % -> width.
  const auto p = harness::parse_plan(
      search_plan(
          "search = { loss = [0.5, 0.0, 1.0], trial = 1, final = 5, precision = 2, max_trials = 30, max_finals = 2 }\n"),
      "plan.toml");
  const auto& s = *p.tests.at(0).search;
  CHECK(s.older_form);
  CHECK(s.max_trials == 30);
  REQUIRE(s.goals.size() == 3);  // strictest first
  check_goal(s.goals[0], "NDR", 0, 0, 5, 5, 0.02, 1);
  check_goal(s.goals[1], "PDR", 0.005, 0, 5, 5, 0.02, 1);
  check_goal(s.goals[2], "loss 1 %", 0.01, 0, 5, 5, 0.02, 1);
  // The older defaults: 2-s trials, a 30-s final, 1 % precision.
  const auto d = *harness::parse_plan(search_plan("search = { loss = [0.0] }\n"), "plan.toml").tests.at(0).search;
  REQUIRE(d.goals.size() == 1);
  check_goal(d.goals[0], "NDR", 0, 0, 30, 30, 0.01, 2);
}

TEST_CASE("plan search: mistakes named at their place", "[harness][plan][search]") {
  CHECK(search_error(search_plan("search = { goals = [ { loss_ratio = 0.0 } ], loss = [0.5] }\n")) ==
        "plan.toml:15:20: tests[0] search: give 'goals' or the older 'loss' (loss, trial, final, precision), not both");
  CHECK(search_error(search_plan("search = { goals = [ { name = \"x\" } ] }\n")) ==
        "plan.toml:15:22: tests[0] search goals[0]: missing key 'loss_ratio'");
  CHECK(search_error(search_plan("search = { goals = [ { loss_ratio = 0.0, exceed_ratio = 1.5 } ] }\n")) ==
        "plan.toml:15:57: tests[0] search goals[0]: 'exceed_ratio' = 1.5 is out of range [0, 0.99]");
  CHECK(search_error(search_plan(
            "search = { goals = [ { loss_ratio = 0.0, final_trial_duration = 30, duration_sum = 10 } ] }\n")) ==
        "plan.toml:15:84: tests[0] search goals[0]: duration_sum 10 s is shorter than one final trial (30 s)");
  CHECK(
      search_error(search_plan("search = { goals = [ { loss_ratio = 0.0, initial_trial_duration = 5 } ] }\n")) ==
      "plan.toml:15:67: tests[0] search goals[0]: initial_trial_duration 5 s is longer than final_trial_duration 1 s");
  CHECK(search_error(search_plan("search = { goals = [ { loss_ratio = 0.0 }, { loss_ratio = 0 } ] }\n")) ==
        "plan.toml:15:44: tests[0] search: two goals are named 'NDR'");
  CHECK(search_error(search_plan("search = { goals = [ { loss_ratio = 0.0, widh = 0.01 } ] }\n")) ==
        "plan.toml:15:42: tests[0] search goals[0]: unknown key 'widh' (did you mean 'width'?)");
  CHECK(search_error(search_plan("search = { goals = [] }\n")) == "plan.toml:15:20: tests[0] search: 'goals' is empty");
  CHECK_THAT(search_error(search_plan("search = { loss = [60.0] }\n")), Catch::Contains("out of range"));
  CHECK_THAT(search_error(search_plan("pps = 10\nsearch = {}\n")), Catch::Contains("'search' finds the rate itself"));
  CHECK_THAT(search_error(search_plan("kind = \"TCP_STREAM\"\nsearch = {}\n")), Catch::Contains("only UDP_STREAM"));
}

TEST_CASE("plan search: --duration sets the goals' final trials, and the rewritten plan reads back the same",
          "[harness][plan][search]") {
  for (const char* search : {"search = {}\n", "search = { goals = [ { loss_ratio = 0.0, duration_sum = 2 } ] }\n",
                             "search = { loss = [0.0], trial = 2, final = 30 }\n",
                             "[tests.search]\n[[tests.search.goals]]\nloss_ratio = 0.0\n"}) {
    INFO(search);
    const std::string text = search_plan(search);
    harness::plan p = harness::parse_plan(text, "plan.toml");
    harness::plan_overrides o;
    o.duration = 4;
    harness::apply_overrides(p, o);
    for (const auto& g : p.tests.at(0).search->goals) {
      CHECK(g.final_trial_duration == 4);
      CHECK(g.initial_trial_duration <= 4);
      CHECK(g.duration_sum >= 4);
    }
    const auto back = harness::rewrite_plan_text(text, p, o);
    REQUIRE(back);
    const auto again = harness::parse_plan(*back, "plan.toml");
    REQUIRE(again.tests.at(0).search->goals.size() == p.tests.at(0).search->goals.size());
    for (std::size_t i = 0; i < p.tests[0].search->goals.size(); ++i) {
      CHECK(again.tests[0].search->goals[i].final_trial_duration == 4);
      CHECK(again.tests[0].search->goals[i].duration_sum == p.tests[0].search->goals[i].duration_sum);
    }
  }
}
