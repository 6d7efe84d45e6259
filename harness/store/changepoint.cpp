#include "harness/store/changepoint.hpp"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace harness::store {

namespace {

// One wild point moves the sums by a bounded step, and the quantile stays finite.
constexpr double residual_cap = 8;

struct prefix_sums {
  std::vector<double> sum;
  explicit prefix_sums(const std::vector<double>& x) : sum(x.size() + 1, 0.0) {
    std::partial_sum(x.begin(), x.end(), sum.begin() + 1);
  }
  double mean(std::size_t from, std::size_t to) const {
    return to > from ? (sum[to] - sum[from]) / static_cast<double>(to - from) : 0;
  }
};

// Welford: a residual in O(1).
struct running {
  double count = 0, mean = 0, ss = 0;
  void add(double v) {
    count += 1;
    const double d = v - mean;
    mean += d / count;
    ss += d * (v - mean);
  }
};

// Point n against the segment's points before it, as N(0, 1).
double residual(const std::vector<double>& x, const running& before, std::size_t n) {
  const double m = before.count;
  const double mean = before.mean;
  const double ss = before.ss;
  // A paced rate may never vary: 0.1 % of the level, below a rate's resolution, is the scale.
  const double sd = std::max(std::sqrt(ss / (m - 1)), 1e-3 * std::fabs(mean));
  const double d = x[n] - mean;
  if (sd == 0) return 0;
  const double t = d / sd * std::sqrt(m / (m + 1));
  const boost::math::students_t dist(m - 1);
  // The small tail, for precision.
  const double tail = boost::math::cdf(dist, -std::fabs(t));
  const double u = tail <= 0 ? residual_cap : -boost::math::quantile(boost::math::normal(), tail);
  return std::copysign(std::min(u, residual_cap), t);
}

// The least-squares split of from..last: the CUSUM's own estimate (its last zero) drifts early.
std::size_t split_of(const prefix_sums& x, std::size_t from, std::size_t last) {
  std::size_t best = last;
  double best_gain = -1;
  for (std::size_t t = from + 1; t <= last; ++t) {
    const double a = x.mean(from, t), b = x.mean(t, last + 1);
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
  const prefix_sums sums(x);
  std::size_t from = 0;
  double up = 0, down = 0;
  running before;
  for (std::size_t n = from + o.warmup; n < x.size(); ++n) {
    if (n == from + o.warmup) {
      up = down = 0;
      before = {};
      for (std::size_t i = from; i < n; ++i) before.add(x[i]);
    }
    const double u = residual(x, before, n);
    before.add(x[n]);
    up = std::max(0.0, up + u - o.k);
    down = std::max(0.0, down - u - o.k);
    if (up <= o.h && down <= o.h) continue;
    const std::size_t begins = split_of(sums, from, n);
    out.push_back({begins, n, sums.mean(from, begins), sums.mean(begins, n + 1)});
    // From where the shift began, not the alarm: a shift soon after would join the new reference.
    from = begins;
    n = from + o.warmup - 1;  // ++n: the new segment's first residual
  }
  return out;
}

}  // namespace harness::store
