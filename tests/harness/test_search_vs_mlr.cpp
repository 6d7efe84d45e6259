// Today's rate search (harness/run/search.cpp) and MLRsearch (core/search) on the same 200 seeded noisy
// simulated SUTs: the trial-seconds each spends for NDR and PDR, and how often each lands within 1 %
// (the rate search's precision) of the truth. Printed as a warning; MLRsearch must spend fewer.
#include "tests/support/search_compare.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>

namespace {

nb::test::simulated_sut noisy_sut(unsigned seed) {
  nb::test::simulated_sut sut;
  sut.rng.seed(seed);
  sut.knee = std::uniform_real_distribution<double>(1e5, 2e6)(sut.rng);
  sut.burst_probability = 0.02;
  return sut;
}

struct tally {
  double seconds = 0;
  std::size_t trials = 0;
  int within = 0;
  void add(const nb::test::search_cost& c, const std::vector<double>& truth) {
    seconds += c.trial_seconds;
    trials += c.trials;
    for (std::size_t i = 0; i < truth.size(); ++i)
      if (c.rates[i] && std::abs(*c.rates[i] - truth[i]) <= 0.01 * truth[i]) ++within;
  }
};

}  // namespace

TEST_CASE("search comparison: MLRsearch spends fewer trial-seconds than the rate search on 200 noisy SUTs", "[search][mlr]") {
  constexpr int runs = 200;
  tally today, mlr, mlr_wide, mlr_long;
  auto wide = [](nb::search::goal g) {
    g.width = 0.01;
    return g;
  };
  // Fewer, longer trials where each trial costs a start-up (the harness starts processes per trial):
  // 1-s trials while the bracket is wide, 5-s ones at the end, 20 s of them per load.
  auto longer = [](nb::search::goal g) {
    g.final_trial_duration = 5;
    g.duration_sum = 20;
    return g;
  };
  for (unsigned seed = 1; seed <= runs; ++seed) {
    auto a = noisy_sut(seed), b = noisy_sut(seed), c = noisy_sut(seed), d = noisy_sut(seed);
    const double sender_max = 2 * a.knee;
    // The rate search reports loads (NDR at the knee, PDR above it by its loss target); MLRsearch
    // reports conditional throughput, a forwarding rate: the knee for both.
    today.add(nb::test::rate_search_cost(a, harness::search_spec{}, sender_max), {a.knee, a.true_load(0.005)});
    mlr.add(nb::test::mlr_search_cost(b, {nb::search::ndr_goal(), nb::search::pdr_goal()}, sender_max), {b.knee, b.knee});
    mlr_wide.add(nb::test::mlr_search_cost(c, {wide(nb::search::ndr_goal()), wide(nb::search::pdr_goal())}, sender_max),
                 {c.knee, c.knee});
    mlr_long.add(nb::test::mlr_search_cost(d, {longer(nb::search::ndr_goal()), longer(nb::search::pdr_goal())}, sender_max),
                 {d.knee, d.knee});
  }
  const auto line = [&](const char* name, const tally& t) {
    return fmt::format("{}: {:.1f} trial-seconds and {:.1f} trials per search, NDR+PDR within 1 % of the truth {}/{}\n", name,
                       t.seconds / runs, static_cast<double>(t.trials) / runs, t.within, 2 * runs);
  };
  WARN(line("rate search (2-s trials, 30-s finals, 1 % precision)", today) +
       line("MLRsearch (CSIT defaults: 1-s trials, 21-s sum, width 0.005)", mlr) + line("MLRsearch, width 0.01", mlr_wide) +
       line("MLRsearch, 5-s final trials, 20-s sum", mlr_long));
  CHECK(mlr.seconds < today.seconds);
  CHECK(mlr_wide.seconds < mlr.seconds);
  CHECK(mlr.within >= 2 * runs * 95 / 100);
}
