#include "harness/store/changepoint.hpp"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace harness::store {

namespace {

// A residual beyond this many standard deviations says no more than this one does: one wild point (a
// run that failed halfway yet counted) moves the sums by a bounded step, and the quantile stays finite.
constexpr double residual_cap = 8;

double mean_of(const std::vector<double>& x, std::size_t from, std::size_t to) {
  return to > from ? std::accumulate(x.begin() + from, x.begin() + to, 0.0) / static_cast<double>(to - from) : 0;
}

// Point n (0-based, n >= 2 points before it since `from`) against the points from..n-1, as N(0, 1).
double residual(const std::vector<double>& x, std::size_t from, std::size_t n) {
  const double m = static_cast<double>(n - from);  // points before it
  const double mean = mean_of(x, from, n);
  double ss = 0;
  for (std::size_t i = from; i < n; ++i) ss += (x[i] - mean) * (x[i] - mean);
  // Figures that have not varied at all so far (a rate paced exactly) give no scale: a floor of 0.1 % of
  // the level, below what a rate measurement resolves, stands in, so the next figure's wobble is not
  // taken for an infinite shift (the t of two points is heavy-tailed enough to keep it modest).
  const double sd = std::max(std::sqrt(ss / (m - 1)), 1e-3 * std::fabs(mean));
  const double d = x[n] - mean;
  if (sd == 0) return 0;
  const double t = d / sd * std::sqrt(m / (m + 1));
  const boost::math::students_t dist(m - 1);
  // The tail that is small, for precision: the quantile of the lower tail of -|t|, sign restored.
  const double tail = boost::math::cdf(dist, -std::fabs(t));
  const double u = tail <= 0 ? residual_cap : -boost::math::quantile(boost::math::normal(), tail);
  return std::copysign(std::min(u, residual_cap), t);
}

// Where in from..last (inclusive) the level most likely changed: the split that leaves the least squared
// error about the two means (the least-squares estimate of one change point), the first point after the
// segment's start at the earliest. The CUSUM's own estimate (after its last zero) drifts early when a
// few residuals before the shift happened to lean its way.
std::size_t split_of(const std::vector<double>& x, std::size_t from, std::size_t last) {
  std::size_t best = last;
  double best_gain = -1;
  for (std::size_t t = from + 1; t <= last; ++t) {
    const double a = mean_of(x, from, t), b = mean_of(x, t, last + 1);
    const double gain = (a - b) * (a - b) * static_cast<double>(t - from) * static_cast<double>(last + 1 - t);
    if (gain > best_gain) {
      best_gain = gain;
      best = t;
    }
  }
  return best;
}

}  // namespace

std::vector<change_point> find_change_points(const std::vector<double>& x, const cusum_options& o) {
  std::vector<change_point> out;
  if (x.size() < o.min_points) return out;
  std::size_t from = 0;  // the current segment's first point
  double up = 0, down = 0;
  for (std::size_t n = from + o.warmup; n < x.size(); ++n) {
    if (n == from + o.warmup) up = down = 0;  // a segment's first residual: the sums start afresh
    const double u = residual(x, from, n);
    up = std::max(0.0, up + u - o.k);
    down = std::max(0.0, down - u - o.k);
    if (up <= o.h && down <= o.h) continue;
    const std::size_t begins = split_of(x, from, n);
    out.push_back({begins, n, mean_of(x, from, begins), mean_of(x, begins, n + 1)});
    // The new segment starts where the shift began: its points since are the new level's reference
    // (starting at the alarm instead would put a shift that closely follows into the new reference).
    from = begins;
    n = from + o.warmup - 1;  // the loop's ++n: the new segment's first residual
  }
  return out;
}

}  // namespace harness::store
