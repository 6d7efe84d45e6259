// core/search/shortfall_rule: which trials whose senders fell short a search's controller runs again,
// untold (netload --search and the harness both follow it).
#include "core/search/shortfall_rule.hpp"

#include <catch2/catch.hpp>

using nb::search::shortfall_rule;
using nb::search::trial_result;

namespace {

trial_result shortfall_trial(double load, bool ran, bool load_limited) {
  trial_result t;
  t.intended_load = load;
  t.duration = 1;
  t.ran = ran;
  t.load_limited = load_limited;
  return t;
}

}  // namespace

TEST_CASE("shortfall rule: a first shortfall at a load runs again untold, a second is the senders' limit", "[search]") {
  shortfall_rule rule;
  CHECK_FALSE(rule.run_again(shortfall_trial(950, true, false)));
  CHECK(rule.run_again(shortfall_trial(1000, true, true)));
  CHECK_FALSE(rule.run_again(shortfall_trial(1000, true, true)));  // told: the search lowers its max load
  CHECK(rule.run_again(shortfall_trial(900, true, true)));         // under a load offered in full: a first again
  CHECK_FALSE(rule.run_again(shortfall_trial(800, true, false)));
  CHECK_FALSE(rule.run_again(shortfall_trial(800, false, true)));  // failed to run: no shortfall to repeat
}

TEST_CASE("shortfall rule: senders at their limit step down one trial a load", "[search]") {
  shortfall_rule rule;
  CHECK_FALSE(rule.run_again(shortfall_trial(500, true, false)));  // offered in full at 500
  REQUIRE(rule.run_again(shortfall_trial(1000, true, true)));
  REQUIRE_FALSE(rule.run_again(shortfall_trial(1000, true, true)));  // told: the senders' limit
  CHECK_FALSE(rule.run_again(shortfall_trial(900, true, true)));     // above 500, right after a told shortfall: told
  CHECK(rule.run_again(shortfall_trial(450, true, true)));  // at or under a load offered in full: a busy moment
}

TEST_CASE("shortfall rule: a repeat at a load the caller rounded is the same load", "[search]") {
  shortfall_rule rule;
  REQUIRE(rule.run_again(shortfall_trial(1000, true, true)));
  CHECK_FALSE(rule.run_again(shortfall_trial(1000 * (1 + 1e-12), true, true)));
}
