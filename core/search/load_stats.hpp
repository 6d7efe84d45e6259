#pragma once
// RFC 9971's auxiliary and result terms, pure functions of the trials so far, for mlr_search and its tests.
#include "core/search/mlr_search.hpp"

#include <optional>
#include <vector>

namespace nb::search {

// A trial that failed to run, or could not offer its load, measured nothing of the SUT there.
bool is_evidence(const trial_result& t) noexcept;

// Rounding only: the caller may turn the load into per-instance rates and back.
bool same_load(double a, double b) noexcept;

double relative_width(double lower, double upper) noexcept;
// A rounding over `width` still counts as within.
bool within_width(double lower, double upper, double width) noexcept;

// RFC 9971 section 4.7.1.
bool is_high_loss(const goal& g, const trial_result& t) noexcept;
bool is_full_length(const goal& g, const trial_result& t) noexcept;

struct duration_sums {
  double full_length_low_loss = 0;
  double full_length_high_loss = 0;
  double short_low_loss = 0;
  double short_high_loss = 0;
};
duration_sums sums_at(const goal& g, double load, const std::vector<trial_result>& trials);

// RFC 9971 section 6.1 and appendix A, the intermediate values named as there.
struct load_classification {
  double effective_high_loss_sum = 0;
  double effective_full_sum = 0;
  double effective_whole_sum = 0;
  double missing_sum = 0;
  double optimistic_exceed_ratio = 0;
  double pessimistic_exceed_ratio = 0;
  load_class result = load_class::undecided;
};
load_classification classify_sums(const goal& g, const duration_sums& s);

// RFC 9971 appendix B; none without a full-length trial at that load.
std::optional<double> conditional_throughput_at(const goal& g, double load, const std::vector<trial_result>& trials);

std::vector<double> measured_loads(const std::vector<trial_result>& trials);

// inverted: lower bounds above the relevant upper bound (loss not monotonic in load).
struct relevant_bounds {
  std::optional<double> lower;
  std::optional<double> upper;
  std::vector<double> inverted;
};
relevant_bounds find_relevant_bounds(const goal& g, const std::vector<trial_result>& trials);

}  // namespace nb::search
