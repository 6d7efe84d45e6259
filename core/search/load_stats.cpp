#include "core/search/load_stats.hpp"

#include <algorithm>
#include <cmath>

namespace nb::search {

namespace {

// A comparison with a goal's threshold must not turn on the last bit of a division.
constexpr double ratio_epsilon = 1e-12;
constexpr double load_epsilon = 1e-9;

}  // namespace

bool is_evidence(const trial_result& t) noexcept { return t.ran && !t.load_limited; }

bool same_load(double a, double b) noexcept {
  return std::abs(a - b) <= load_epsilon * std::max(std::abs(a), std::abs(b));
}

double relative_width(double lower, double upper) noexcept { return upper > 0 ? (upper - lower) / upper : 0; }

bool within_width(double lower, double upper, double width) noexcept {
  return relative_width(lower, upper) <= width * (1 + 1e-9);
}

bool is_high_loss(const goal& g, const trial_result& t) noexcept {
  return t.loss_ratio() > g.loss_ratio + ratio_epsilon;
}

bool is_full_length(const goal& g, const trial_result& t) noexcept {
  return t.duration >= g.final_trial_duration * (1 - load_epsilon);
}

duration_sums sums_at(const goal& g, double load, const std::vector<trial_result>& trials) {
  duration_sums s;
  for (const auto& t : trials) {
    if (!is_evidence(t) || !same_load(t.intended_load, load)) continue;
    const bool high = is_high_loss(g, t);
    double& sum = is_full_length(g, t) ? (high ? s.full_length_high_loss : s.full_length_low_loss)
                                       : (high ? s.short_high_loss : s.short_low_loss);
    sum += t.duration;
  }
  return s;
}

// Short trials can only push a load towards an upper bound (docs/mlrsearch.md#classifying-a-load).
load_classification classify_sums(const goal& g, const duration_sums& s) {
  load_classification c;
  const double exceed_coefficient = g.exceed_ratio / (1 - g.exceed_ratio);
  const double balancing_sum = s.short_low_loss * exceed_coefficient;
  const double positive_excess_sum = std::max(0.0, s.short_high_loss - balancing_sum);
  c.effective_high_loss_sum = s.full_length_high_loss + positive_excess_sum;
  c.effective_full_sum = c.effective_high_loss_sum + s.full_length_low_loss;
  c.effective_whole_sum = std::max(c.effective_full_sum, g.duration_sum);
  c.missing_sum = c.effective_whole_sum - c.effective_full_sum;
  c.optimistic_exceed_ratio = c.effective_high_loss_sum / c.effective_whole_sum;
  c.pessimistic_exceed_ratio = (c.effective_high_loss_sum + c.missing_sum) / c.effective_whole_sum;
  // The RFC compares sums; in ratios an epsilon keeps 10 of 20 s at exceed ratio 0.5 at the limit.
  const double limit = g.exceed_ratio + ratio_epsilon;
  if (c.optimistic_exceed_ratio > limit) c.result = load_class::upper_bound;
  else if (c.pessimistic_exceed_ratio <= limit) c.result = load_class::lower_bound;
  return c;
}

std::optional<double> conditional_throughput_at(const goal& g, double load, const std::vector<trial_result>& trials) {
  std::vector<const trial_result*> full;
  double full_sum = 0;
  for (const auto& t : trials)
    if (is_evidence(t) && same_load(t.intended_load, load) && is_full_length(g, t)) {
      full.push_back(&t);
      full_sum += t.duration;
    }
  if (full.empty()) return std::nullopt;
  std::stable_sort(full.begin(), full.end(), [](auto* a, auto* b) { return a->loss_ratio() < b->loss_ratio(); });
  // Time not measured counts as total loss. 0.1 s is not exact in binary: what is left gets the same
  // slack, or five 0.1-s trials would leave a rounding "missing" and a conditional throughput of 0.
  const double whole = std::max(g.duration_sum, full_sum);
  const double slack = whole * load_epsilon;
  double remaining = whole * (1 - g.exceed_ratio);
  std::optional<double> quantile_loss_ratio;
  for (const auto* t : full) {
    if (quantile_loss_ratio && remaining <= slack) break;
    quantile_loss_ratio = t->loss_ratio();
    remaining -= t->duration;
  }
  if (remaining > slack) quantile_loss_ratio = 1.0;
  return load * (1 - *quantile_loss_ratio);
}

std::vector<double> measured_loads(const std::vector<trial_result>& trials) {
  std::vector<double> loads;
  for (const auto& t : trials)
    if (is_evidence(t)) loads.push_back(t.intended_load);
  std::sort(loads.begin(), loads.end());
  loads.erase(std::unique(loads.begin(), loads.end(), same_load), loads.end());
  return loads;
}

relevant_bounds find_relevant_bounds(const goal& g, const std::vector<trial_result>& trials) {
  relevant_bounds b;
  std::vector<double> lower_bounds;
  for (double load : measured_loads(trials)) {
    const load_class c = classify_sums(g, sums_at(g, load, trials)).result;
    if (c == load_class::upper_bound && !b.upper) b.upper = load;
    if (c == load_class::lower_bound) (b.upper ? b.inverted : lower_bounds).push_back(load);
  }
  if (!lower_bounds.empty()) b.lower = lower_bounds.back();
  return b;
}

}  // namespace nb::search
