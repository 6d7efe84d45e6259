#pragma once
// RFC 9971's auxiliary and result terms as functions of the trials measured so far: trial
// classification (high-loss / low-loss, short / full-length), load classification (upper bound,
// lower bound, undecided), the relevant bounds and the conditional throughput. Pure computation over
// a list of trial_result, shared by mlr_search and its tests.
#include "core/search/mlr_search.hpp"

#include <optional>
#include <vector>

namespace nb::search {

// A trial that ran and offered its load is evidence about the SUT at that load; a trial that failed to
// run measured nothing, and one whose sender could not offer the intended load measured the sender,
// not the SUT at that load. Neither enters any sum below.
bool is_evidence(const trial_result& t) noexcept;

// Two intended loads are the same load when they differ by rounding only: the caller may turn the
// aggregate load into per-instance rates and back.
bool same_load(double a, double b) noexcept;

// (upper - lower) / upper: the goal width's quantity.
double relative_width(double lower, double upper) noexcept;
// Bounds this close are done for a goal of `width` (a rounding over it still counts as within).
bool within_width(double lower, double upper, double width) noexcept;

// Trial classification (RFC 9971 section 4.7.1).
bool is_high_loss(const goal& g, const trial_result& t) noexcept;
bool is_full_length(const goal& g, const trial_result& t) noexcept;

// The four sums of Trial Effective Duration (here: the trial duration) at one load, for one goal.
struct duration_sums {
  double full_length_low_loss = 0;
  double full_length_high_loss = 0;
  double short_low_loss = 0;
  double short_high_loss = 0;
};
duration_sums sums_at(const goal& g, double load, const std::vector<trial_result>& trials);

// The load classification logic (RFC 9971 section 6.1 and its appendix A), with the intermediate
// values named as the RFC names them, for reports and tests.
struct load_classification {
  double effective_high_loss_sum = 0;   // full-length high-loss sum plus the short trials' positive excess
  double effective_full_sum = 0;        // effective high-loss sum plus full-length low-loss sum
  double effective_whole_sum = 0;       // the larger of effective full sum and goal duration sum
  double missing_sum = 0;               // effective whole sum minus effective full sum
  double optimistic_exceed_ratio = 0;   // effective high-loss sum / effective whole sum
  double pessimistic_exceed_ratio = 0;  // (effective high-loss sum + missing sum) / effective whole sum
  load_class result = load_class::undecided;
};
load_classification classify_sums(const goal& g, const duration_sums& s);

// The RFC's conditional throughput code (appendix B) at one load: intended load times one minus the
// exceed-ratio quantile of the full-length trials' loss ratios, time missing from the goal duration
// sum counting as loss ratio 1. None when no full-length trial was measured there.
std::optional<double> conditional_throughput_at(const goal& g, double load, const std::vector<trial_result>& trials);

// Every load with evidence, ascending, each once.
std::vector<double> measured_loads(const std::vector<trial_result>& trials);

// Relevant upper bound: the smallest upper bound. Relevant lower bound: the largest lower bound below
// it (below nothing when there is no upper bound). inverted: lower bounds above the relevant upper
// bound (loss not monotonic in load).
struct relevant_bounds {
  std::optional<double> lower;
  std::optional<double> upper;
  std::vector<double> inverted;
};
relevant_bounds find_relevant_bounds(const goal& g, const std::vector<trial_result>& trials);

}  // namespace nb::search
