#pragma once
// What a search's controller does with a trial whose senders fell short of its load, before the search
// hears of it: a late slice on a shared host must not lower the max load for good
// (docs/mlrsearch.md#a-sender-that-could-not-offer-the-load).
#include "core/search/mlr_search.hpp"

#include <optional>

namespace nb::search {

class shortfall_rule {
 public:
  // For every search trial, in order. True: run the same request again, telling the search nothing.
  bool run_again(const trial_result& t);

 private:
  std::optional<double> short_at_;  // until the next trial
  bool limited_before_ = false;
  double offered_in_full_ = 0;  // the highest load a told trial offered in full
};

}  // namespace nb::search
