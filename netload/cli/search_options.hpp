#pragma once
// netload --search's settings: MLRsearch goals by RFC 9971's names, and bounds.
#include "core/search/mlr_search.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nb::load {

struct search_options {
  std::string goals;  // "ndr", "pdr" or "both"; "" = one ordinary test
  // Unset: CSIT's. loss_ratio is the PDR's: the NDR's is 0.
  std::optional<double> loss_ratio, exceed_ratio, final_trial_duration, duration_sum, width, initial_trial_duration;
  double settle_s = 1;             // so one trial's tail does not reach the next
  std::uint32_t max_trials = 200;  // MRR included
  double max_time_s = 900;         // no trial starts that would end later

  bool enabled() const noexcept { return !goals.empty(); }
  // NDR before PDR, with the options above applied.
  std::vector<nb::search::goal> search_goals() const;
};

}  // namespace nb::load
