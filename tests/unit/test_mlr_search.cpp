// MLRsearch against simulated SUTs (tests/support/simulated_sut.hpp): it converges to the simulated
// truth within the goal width, decides bounds only with the duration sum the RFC requires, and names
// the irregular cases (max load a lower bound, min load an upper bound, loss not monotonic in load,
// trials that failed to run or could not be offered).
#include "core/search/load_stats.hpp"
#include "core/search/mlr_search.hpp"
#include "core/search/search_record.hpp"
#include "tests/support/simulated_sut.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace {

using nb::search::goal;
using nb::search::goal_result;
using nb::search::load_class;
using nb::search::mlr_search;
using nb::test::simulated_sut;
using nlohmann::json;

bool names(const goal_result& r, std::string_view what) {
  return std::any_of(r.irregularities.begin(), r.irregularities.end(),
                     [&](const auto& x) { return x.find(what) != std::string::npos; });
}

std::string describe(const mlr_search& s) {
  std::string out;
  for (const auto& r : s.results())
    out += fmt::format("{}: lower {} upper {} ct {} regular {} [{}]\n", r.g.name, r.relevant_lower_bound.value_or(-1),
                       r.relevant_upper_bound.value_or(-1), r.conditional_throughput.value_or(-1), r.regular,
                       fmt::join(r.irregularities, "; "));
  return out + fmt::format("{} trials, {} trial-seconds", s.trials().size(), s.trial_seconds());
}

// The SUT's sender tops out at twice the knee; the search starts from what the MRR trial forwarded.
mlr_search search_of(simulated_sut& sut, std::vector<goal> goals = {nb::search::ndr_goal(), nb::search::pdr_goal()}) {
  const double max_load = 2 * sut.knee;
  mlr_search s(std::move(goals), sut.knee / 1000, max_load, sut.mrr_forwarding_rate(max_load));
  nb::test::run_search(s, sut);
  return s;
}

}  // namespace

TEST_CASE("mlr search: 200 noisy SUTs, each goal's conditional throughput within its width of the truth in >= 95 %",
          "[mlr]") {
  constexpr int runs = 200;
  int within[2] = {0, 0}, regular = 0;
  double seconds = 0;
  for (int seed = 1; seed <= runs; ++seed) {
    simulated_sut sut;
    sut.rng.seed(static_cast<unsigned>(seed));
    sut.knee = std::uniform_real_distribution<double>(1e5, 2e6)(sut.rng);
    sut.burst_probability = 0.02;
    auto s = search_of(sut);
    seconds += s.trial_seconds();
    const auto results = s.results();
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      regular += r.regular;
      INFO("seed " << seed << " knee " << sut.knee << "\n" << describe(s));
      REQUIRE(r.conditional_throughput);
      const double truth = sut.true_forwarding_rate();
      if (std::abs(*r.conditional_throughput - truth) <= r.g.width * truth) ++within[i];
      // Bounds only with the time the RFC requires: a lower bound has low-loss time for more than
      // (1 - exceed ratio) of the duration sum, an upper bound high-loss time for more than the rest.
      const auto lo = nb::search::sums_at(r.g, *r.relevant_lower_bound, s.trials());
      CHECK(lo.full_length_low_loss >= (1 - r.g.exceed_ratio) * r.g.duration_sum);
      const auto hi = nb::search::sums_at(r.g, *r.relevant_upper_bound, s.trials());
      CHECK(hi.full_length_high_loss + hi.short_high_loss > r.g.exceed_ratio * r.g.duration_sum);
    }
  }
  WARN(fmt::format(
      "NDR within width in {}/{} runs, PDR in {}/{}, {} of {} results regular; mean {:.1f} trial-seconds per search",
      within[0], runs, within[1], runs, regular, 2 * runs, seconds / runs));
  CHECK(within[0] >= runs * 95 / 100);
  CHECK(within[1] >= runs * 95 / 100);
}

TEST_CASE("mlr search: a SUT faster than the sender - max load is a lower bound, named, irregular", "[mlr]") {
  simulated_sut sut;
  sut.knee = 1e6;
  mlr_search s({nb::search::ndr_goal(), nb::search::pdr_goal()}, 1000, 0.8e6, 0.8e6);
  nb::test::run_search(s, sut);
  INFO(describe(s));
  for (const auto& r : s.results()) {
    CHECK_FALSE(r.regular);
    CHECK_FALSE(r.relevant_upper_bound);
    REQUIRE(r.relevant_lower_bound);
    CHECK(*r.relevant_lower_bound == Approx(0.8e6));
    CHECK(*r.conditional_throughput == Approx(0.8e6));
    CHECK(names(r, "max load is a lower bound"));
  }
}

TEST_CASE("mlr search: a SUT slower than the min load - min load is an upper bound, no lower bound, no throughput",
          "[mlr]") {
  simulated_sut sut;
  sut.knee = 1000;
  mlr_search s({nb::search::ndr_goal(), nb::search::pdr_goal()}, 5000, 1e6, 200e3);
  nb::test::run_search(s, sut);
  INFO(describe(s));
  for (const auto& r : s.results()) {
    CHECK_FALSE(r.regular);
    CHECK_FALSE(r.relevant_lower_bound);
    CHECK_FALSE(r.conditional_throughput);
    REQUIRE(r.relevant_upper_bound);
    CHECK(*r.relevant_upper_bound == Approx(5000));
    CHECK(names(r, "min load is an upper bound"));
    CHECK(s.classify(r.g, 5000) == load_class::upper_bound);
  }
  // It got there by external search downwards, not by walking in width-sized steps: few trials.
  CHECK(s.trials().size() < 40);
}

TEST_CASE(
    "mlr search: loss not monotonic - a lower bound above the upper bound found later is named, the answer is below",
    "[mlr]") {
  // At 5000 the SUT was fine for 11 s (another goal's trials, say); from then on it loses above 3000,
  // and 11 s at 4000 show it.
  simulated_sut sut;
  sut.knee = 3000;
  mlr_search s({nb::search::pdr_goal()}, 100, 10000, 5000);
  for (int i = 0; i < 11; ++i) {
    auto t = sut.run(5000, 1);
    t.received = t.sent;
    s.record(t);
  }
  REQUIRE(s.classify(s.goals().front(), 5000) == load_class::lower_bound);
  for (int i = 0; i < 11; ++i) s.record(sut.run(4000, 1));
  REQUIRE(s.classify(s.goals().front(), 4000) == load_class::upper_bound);
  nb::test::run_search(s, sut);
  INFO(describe(s));
  const auto r = s.results().front();
  CHECK(names(r, "loss not monotonic in load: 5000 is a lower bound above the relevant upper bound"));
  REQUIRE(r.relevant_upper_bound);
  REQUIRE(r.relevant_lower_bound);
  CHECK(*r.relevant_upper_bound < 5000);
  CHECK(std::abs(*r.relevant_lower_bound - sut.true_load(0.005)) <= 0.01 * sut.true_load(0.005));
  CHECK(r.regular);  // the RFC's conservative reading: the upper bound holds, the lower bound above it was a fluke
}

TEST_CASE("mlr search: a trial that failed to run is repeated and named, two in a row stop the search", "[mlr]") {
  simulated_sut once;
  once.fail_trials = {3};
  auto s = search_of(once);
  INFO(describe(s));
  REQUIRE(s.trials().size() > 3);
  CHECK_FALSE(s.trials()[2].ran);
  CHECK(s.trials()[3].intended_load == s.trials()[2].intended_load);  // the same trial again
  CHECK(s.reasons()[3] == "repeating a trial that failed to run");
  for (const auto& r : s.results()) {
    CHECK(r.regular);
    CHECK(names(r, "1 trial(s) failed to run"));
    CHECK(std::abs(*r.conditional_throughput - once.knee) <= r.g.width * once.knee);
  }
  simulated_sut twice;
  twice.fail_trials = {5, 6};
  auto t = search_of(twice);
  INFO(describe(t));
  CHECK(t.trials().size() == 6);
  CHECK_FALSE(t.next());
  for (const auto& r : t.results()) {
    CHECK_FALSE(r.regular);
    CHECK(names(r, "stopped: two trials in a row failed to run"));
  }
}

TEST_CASE("mlr search: trials the sender could not offer are no evidence and lower the max load", "[mlr]") {
  simulated_sut sut;
  sut.knee = 1e6;
  sut.sender_max = 0.7e6;  // the search is told 2e6
  auto s = search_of(sut);
  INFO(describe(s));
  CHECK(s.max_load() <= 0.7e6);
  for (const auto& r : s.results()) {
    CHECK_FALSE(r.regular);
    CHECK(names(r, "could not be offered"));
    CHECK(names(r, "max load is a lower bound"));
    REQUIRE(r.relevant_lower_bound);
    CHECK(*r.relevant_lower_bound == Approx(s.max_load()));
    // No load_limited trial counts: the bound's evidence is at a load the sender did offer.
    for (const auto& t : s.trials())
      if (t.load_limited) CHECK(s.classify(r.g, t.intended_load) == load_class::undecided);
  }
}

TEST_CASE("mlr search: a sender starved once above a load it offered in full does not cap the max load under it",
          "[mlr]") {
  mlr_search s({nb::search::pdr_goal()}, 1000, 2e6, 1e6);
  nb::search::trial_result full;
  full.intended_load = 1e6;
  full.duration = 1;
  full.sent = full.received = 1'000'000;
  s.next();
  s.record(full);
  nb::search::trial_result starved = full;  // asked 1.5e6, the host let the sender offer 0.4e6
  starved.intended_load = 1.5e6;
  starved.sent = starved.received = 400'000;
  starved.load_limited = true;
  s.next();
  s.record(starved);
  CHECK(s.max_load() == Approx(1e6));
  for (int i = 0; i < 5; ++i) {  // further starved trials lower it no more
    starved.intended_load = s.max_load() * 1.2;
    s.record(starved);
  }
  CHECK(s.max_load() == Approx(1e6));
  starved.intended_load = 1e6;  // now short at the load it once offered in full: the host is slower
  s.record(starved);
  CHECK(s.max_load() < 1e6);
}

TEST_CASE("mlr search: bad starting guesses far below and far above still converge", "[mlr]") {
  for (double start_share : {0.01, 0.3, 1.0, 1.9}) {
    simulated_sut sut;
    sut.knee = 1e6;
    mlr_search s({nb::search::ndr_goal(), nb::search::pdr_goal()}, 1000, 2e6, start_share * sut.knee);
    nb::test::run_search(s, sut);
    INFO("start at " << start_share << " of the knee\n" << describe(s));
    for (const auto& r : s.results()) {
      CHECK(r.regular);
      CHECK(std::abs(*r.conditional_throughput - sut.knee) <= r.g.width * sut.knee);
    }
    CHECK(s.trials().size() < 120);
  }
}

TEST_CASE("mlr search: each goal's trial-seconds and the JSON record in the RFC's terms", "[mlr]") {
  simulated_sut sut;
  sut.fail_trials = {2};
  auto s = search_of(sut);
  const auto results = s.results();
  double total = 0;
  for (const auto& t : s.trials()) total += t.duration;
  CHECK(s.trial_seconds() == Approx(total));
  for (const auto& r : results) {
    CHECK(r.trial_seconds > 0);
    CHECK(r.trial_seconds <= s.trial_seconds());
  }
  // The stricter goal is decided at smaller loads, measured first: it is done before the other.
  CHECK(results[0].trial_seconds < results[1].trial_seconds);
  CHECK(results[1].trial_seconds == Approx(s.trial_seconds()));
  // The record as netload writes it: the search record, and the search's own trials beside it.
  const auto record_of = [](const mlr_search& m) {
    nb::search::search_record r;
    r.goals = m.goals();
    r.goal_results = nb::search::goal_results_of(r.goals, &m, false, "");
    json j = nb::search::to_json(r);
    j.update(nb::search::trials_json(m));
    return j;
  };
  const auto j = record_of(s);
  REQUIRE(j.at("goals").size() == 2);
  CHECK(j["goals"][0]["name"] == "NDR");
  CHECK(j["goals"][1]["loss_ratio"] == 0.005);
  for (const char* k : {"exceed_ratio", "final_trial_duration", "duration_sum", "width", "initial_trial_duration"})
    CHECK(j["goals"][0].contains(k));
  REQUIRE(j.at("trials").size() == s.trials().size());
  CHECK(j["trials"][1]["ran"] == false);
  CHECK(j["trials"][1]["loss_ratio"].is_null());
  const auto& t0 = j["trials"][0];
  for (const char* k : {"intended_load", "duration", "sent", "received", "loss_ratio", "forwarding_rate", "reason"})
    CHECK(t0.contains(k));
  CHECK(t0["forwarding_rate"].get<double>() == Approx(s.trials()[0].forwarding_rate()));
  REQUIRE(j.at("goal_results").size() == 2);
  const auto& r1 = j["goal_results"][1];
  CHECK(r1["goal"]["name"] == "PDR");
  CHECK(r1["goal"]["loss_ratio"] == 0.005);
  CHECK(r1["relevant_lower_bound"].get<double>() == *results[1].relevant_lower_bound);
  CHECK(r1["relevant_upper_bound"].get<double>() == *results[1].relevant_upper_bound);
  CHECK(r1["conditional_throughput"].get<double>() == *results[1].conditional_throughput);
  CHECK(r1["trial_seconds"].get<double>() == results[1].trial_seconds);
  CHECK(r1["regular"] == true);
  CHECK(r1["irregularities"].size() == 1);  // the failed trial
  // Where a value is absent it is null.
  simulated_sut slow;
  slow.knee = 10;
  mlr_search m({nb::search::pdr_goal()}, 1000, 1e6, 1e5);
  nb::test::run_search(m, slow);
  const auto jm = record_of(m);
  CHECK(jm["goal_results"][0]["relevant_lower_bound"].is_null());
  CHECK(jm["goal_results"][0]["conditional_throughput"].is_null());
}

TEST_CASE("mlr search: a caller that rounds the load into 8 per-instance rates still converges", "[mlr]") {
  simulated_sut sut;
  sut.knee = 12345;
  mlr_search s({nb::search::ndr_goal(), nb::search::pdr_goal()}, 100, 30000, 12000);
  while (auto n = s.next()) {
    const double per_instance = std::round(n->intended_load / 8);  // whole packets per second each
    s.record(sut.run(per_instance * 8, n->duration));
    REQUIRE(s.trials().size() < 200);
  }
  INFO(describe(s));
  CHECK(s.reasons().back() != "recorded without a request");
  for (const auto& r : s.results()) {
    CHECK(r.regular);
    CHECK(std::abs(*r.conditional_throughput - sut.knee) <= r.g.width * sut.knee);
  }
}

TEST_CASE(
    "mlr search: an RFC 2544-like goal (60-s final trials, 60-s sum, exceed ratio 0) grows its trials from 1 s to 60 s",
    "[mlr]") {
  goal g;
  g.name = "RFC 2544";
  g.loss_ratio = 0;
  g.exceed_ratio = 0;
  g.final_trial_duration = 60;
  g.duration_sum = 60;
  g.initial_trial_duration = 1;
  g.width = 0.01;
  simulated_sut sut;
  sut.knee = 5e5;
  sut.knee_jitter = 0.001;
  auto s = search_of(sut, {g});
  INFO(describe(s));
  const auto r = s.results().front();
  CHECK(r.regular);
  CHECK(std::abs(*r.conditional_throughput - sut.knee) <= 2 * g.width * sut.knee);
  // The first trials are 1 s long, the last ones 60 s; each relevant bound rests on one 60-s trial.
  CHECK(s.trials().front().duration == 1);
  CHECK(s.trials().back().duration == 60);
  for (double bound : {*r.relevant_lower_bound, *r.relevant_upper_bound}) {
    const auto sums = nb::search::sums_at(g, bound, s.trials());
    CHECK(sums.full_length_low_loss + sums.full_length_high_loss == Approx(60));
  }
  const auto full = std::count_if(s.trials().begin(), s.trials().end(), [](const auto& t) { return t.duration == 60; });
  CHECK(full <= 4);
}
