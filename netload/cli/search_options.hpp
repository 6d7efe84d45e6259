#pragma once
// netload --search: the MLRsearch (core/search/mlr_search.hpp) run against one netserve, and what its
// command line sets: which goals, the goals' parameters by RFC 9971's names, and the search's bounds.
#include "core/search/mlr_search.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nb::load {

struct search_options {
  std::string goals;  // --search: "ndr", "pdr" or "both"; "" = no search, one ordinary test
  // The goals' parameters; unset = CSIT's (nb::search::ndr_goal() / pdr_goal()). loss_ratio is the PDR
  // goal's: the NDR's is 0 by definition.
  std::optional<double> loss_ratio, exceed_ratio, final_trial_duration, duration_sum, width, initial_trial_duration;
  double settle_s = 1;             // --settle: the pause between trials, so one trial's tail does not reach the next
  std::uint32_t max_trials = 200;  // --max-trials: the search ends after this many trials (MRR included)
  double max_time_s = 900;         // --max-search-time: no trial starts that would end past this many seconds

  bool enabled() const noexcept { return !goals.empty(); }
  // The goals --search asked for, in that order (NDR before PDR), with the options above applied.
  std::vector<nb::search::goal> search_goals() const;
};

}  // namespace nb::load
