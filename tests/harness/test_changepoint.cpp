// The change-point method on synthetic series: a step found where it began, a flat noisy series flagged
// no more often than the rate its in-control average run length states, and a series too short to judge.
#include "harness/store/changepoint.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using namespace harness::store;

namespace {

// n points of level `base` with normal noise of `cv` of it, seeded; from point `step_at` on, the level
// is base * (1 + step).
std::vector<double> series_of(std::uint32_t seed, std::size_t n, double base, double cv, std::size_t step_at,
                              double step) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, cv * base);
  std::vector<double> x;
  for (std::size_t i = 0; i < n; ++i) x.push_back((i >= step_at ? base * (1 + step) : base) + noise(rng));
  return x;
}

}  // namespace

TEST_CASE("a step of -30 % at point k is found beginning at k (+-1)", "[changepoint]") {
  // Any other alarm, before the step or after it at the new level, is a false one: counted, and held
  // to the stated rate over the residuals the series had (n - 2 at most).
  int others = 0, missed = 0;
  double residuals = 0;
  for (std::size_t k : {5u, 8u, 10u, 14u, 18u})
    for (std::uint32_t seed = 1; seed <= 50; ++seed) {
      const auto x = series_of(seed, 20, 100000, 0.03, k, -0.30);
      const auto found = find_change_points(x);
      INFO("k " << k << ", seed " << seed);
      const auto step = std::find_if(found.begin(), found.end(),
                                     [&](const change_point& c) { return c.begins + 1 >= k && c.begins <= k + 1; });
      if (step == found.end()) {
        // Only where a false alarm came just before the step: the new reference then has too few
        // points before it (a step 2 points from the end, seen through 2 points of reference).
        REQUIRE(std::any_of(found.begin(), found.end(),
                            [&](const change_point& c) { return c.detected < k && c.detected + 4 >= k; }));
        ++missed;
        others += static_cast<int>(found.size());
        continue;
      }
      CHECK(step->detected >= step->begins);
      CHECK(step->change_percent() < -15);
      CHECK(step->change_percent() > -45);
      others += static_cast<int>(found.size()) - 1;
      residuals += static_cast<double>(x.size() - 2);
    }
  INFO(others << " other alarms over " << residuals << " residuals, " << missed << " step(s) missed");
  CHECK(others <= residuals / cusum_in_control_arl);
  CHECK(missed <= 2);
  WARN(others << " false alarms besides the 250 steps, over " << residuals << " residuals (stated at most "
              << residuals / cusum_in_control_arl << "); " << missed << " step(s) missed after one");
}

TEST_CASE("a rise is found as well as a fall, and a second shift after the first", "[changepoint]") {
  const auto up = find_change_points(series_of(7, 16, 5000, 0.02, 8, 0.30));
  REQUIRE(up.size() == 1);
  CHECK(up[0].begins == 8);
  CHECK(up[0].change_percent() > 20);
  auto x = series_of(11, 14, 1e6, 0.02, 7, -0.30);
  for (double v : series_of(12, 12, 1e6, 0.02, 0, 0)) x.push_back(v);  // back to the first level at 14
  const auto both = find_change_points(x);
  REQUIRE(both.size() == 2);
  CHECK(both[0].begins == 7);
  CHECK(both[1].begins == 14);
}

TEST_CASE("a flat noisy series gives false alarms no more often than the stated in-control rate", "[changepoint]") {
  // The bound the header states: at most (n - 2) residuals per series, each a false alarm with
  // probability 1 / ARL.
  for (std::size_t n : {10u, 20u, 40u}) {
    int alarmed = 0;
    const int seeds = 200;
    for (std::uint32_t seed = 1000; seed < 1000 + seeds; ++seed)
      alarmed += !find_change_points(series_of(seed, n, 250000, 0.05, n, 0)).empty();
    const double stated = static_cast<double>(n - 2) / cusum_in_control_arl;
    INFO("n " << n << ": " << alarmed << " of " << seeds << " flagged, stated rate " << stated * 100 << " %");
    CHECK(alarmed <= stated * seeds);
    WARN("n " << n << ": " << alarmed << " of " << seeds << " flat series flagged (stated at most " << stated * seeds
              << ")");
  }
}

TEST_CASE("a series too short to judge has no change point", "[changepoint]") {
  CHECK(find_change_points({}).empty());
  CHECK(find_change_points({100, 100, 70, 70}).empty());
  CHECK(find_change_points({100, 101, 99, 100, 70, 70, 71, 70}).size() == 1);
}

TEST_CASE("a level that never moved, then moves, is a change", "[changepoint]") {
  const auto found = find_change_points({500, 500, 500, 500, 350, 350, 350});
  REQUIRE(found.size() == 1);
  CHECK(found[0].begins == 4);
  CHECK(found[0].change_percent() == Approx(-30));
}
