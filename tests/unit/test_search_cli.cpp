#include "netload/cli/cli.hpp"
#include "netload/search/search_run.hpp"

#include <catch2/catch.hpp>

using namespace nb::load;

namespace {
client_options parse_search(std::vector<std::string> args) {
  auto o = parse_command_line(args);
  REQUIRE(o);
  return *o;
}
}  // namespace

TEST_CASE("netload --search: the goals asked for, CSIT's parameters unless given by RFC 9971's names",
          "[cli][search]") {
  CHECK_FALSE(parse_search({"-t", "UDP_STREAM"}).search.enabled());
  auto both = parse_search({"-t", "UDP_STREAM", "--search"}).search;  // no value: both goals
  CHECK(both.goals == "both");
  auto goals = both.search_goals();
  REQUIRE(goals.size() == 2);
  CHECK(goals[0].name == "NDR");
  CHECK(goals[0].loss_ratio == 0);
  CHECK(goals[1].name == "PDR");
  CHECK(goals[1].loss_ratio == 0.005);
  CHECK(goals[1].duration_sum == 21);
  CHECK(goals[1].width == 0.005);

  auto pdr = parse_search({"-t",
                           "UDP_STREAM",
                           "--search",
                           "PDR",
                           "--loss-ratio",
                           "0.01",
                           "--exceed-ratio",
                           "0.25",
                           "--final-trial-duration",
                           "2",
                           "--duration-sum",
                           "6",
                           "--width",
                           "0.02",
                           "--initial-trial-duration",
                           "0.5",
                           "--settle",
                           "0.3",
                           "--max-trials",
                           "40",
                           "--max-search-time",
                           "120",
                           "--",
                           "-m",
                           "64"});
  CHECK(pdr.message_size == 64);
  REQUIRE(pdr.search.search_goals().size() == 1);
  const auto g = pdr.search.search_goals()[0];
  CHECK(g.name == "PDR");
  CHECK(g.loss_ratio == 0.01);
  CHECK(g.exceed_ratio == 0.25);
  CHECK(g.final_trial_duration == 2);
  CHECK(g.duration_sum == 6);
  CHECK(g.width == 0.02);
  CHECK(g.initial_trial_duration == 0.5);
  CHECK(pdr.search.settle_s == 0.3);
  CHECK(pdr.search.max_trials == 40);
  CHECK(pdr.search.max_time_s == 120);
  // --loss-ratio is PDR's: with both goals the NDR keeps its 0.
  auto mixed = parse_search({"-t", "UDP_STREAM", "--search", "both", "--loss-ratio", "0.02"}).search.search_goals();
  CHECK(mixed[0].loss_ratio == 0);
  CHECK(mixed[1].loss_ratio == 0.02);
}

TEST_CASE("netload --search refuses what one test sets and what it cannot search, saying why", "[cli][search]") {
  auto refused = [](std::vector<std::string> args, const std::string& why) {
    CHECK_THROWS_WITH(parse_command_line(args), Catch::Contains(why));
  };
  refused({"--search", "pdr"}, "-t TCP_STREAM: the search runs UDP_STREAM only");  // netperf's default test
  refused({"-t", "UDP_RR", "--search", "pdr"}, "-t UDP_RR: the search runs UDP_STREAM only");
  refused({"-t", "UDP_STREAM", "--search", "pdr", "-l", "30"}, "-l is one test's length");
  refused({"-t", "UDP_STREAM", "--search", "pdr", "--rate", "1G"}, "the search chooses each trial's load");
  refused({"-t", "UDP_STREAM", "--search", "pdr", "--bidir"}, "--bidir");
  refused({"-t", "UDP_STREAM", "--search", "pdr", "--json-stream"}, "--json-stream");
  refused({"-t", "UDP_STREAM", "--search", "pdr", "--interval", "1"}, "--interval");
  refused({"-t", "UDP_STREAM", "--search", "pdr", "--peer", "netserver"}, "netserve only");
  refused({"-t", "UDP_STREAM", "--search", "mrr"}, "the goals are ndr, pdr or both");
  refused({"-t", "UDP_STREAM", "--search", "ndr", "--loss-ratio", "0.01"}, "--loss-ratio is the PDR goal's");
  refused({"-t", "UDP_STREAM", "--exceed-ratio", "0.5"}, "--exceed-ratio goes with --search");
  refused({"-t", "UDP_STREAM", "--search", "--initial-trial-duration", "3"}, "longer than --final-trial-duration");
  refused({"-t", "UDP_STREAM", "--search", "--width", "0.9"}, "--width must be from");
}

TEST_CASE("a search trial is load-limited by its count against load x duration, not the sender's rate", "[search]") {
  // Measured on the lab circuit: 20002 sent at 20093 pps for 1 s while the sender's own elapsed time,
  // 1.0066 s with its last wake-up late, gave 19871 pps (-1.1 %): 0.45 % short, the load was offered.
  CHECK_FALSE(offered_short(20002, 20093, 1));
  CHECK(offered_short(19673, 20002, 1));   // 1.6 % short: not offered
  CHECK_FALSE(offered_short(5, 5.06, 1));  // whole datagrams: one of slack
  CHECK(offered_short(3, 5, 1));
  CHECK_FALSE(offered_short(198000, 100000, 2));  // 1 % of 200000 exactly: within the tolerance
  CHECK(offered_short(197000, 100000, 2));
}
