#pragma once
// What a search's controller (netload --search, the harness) does with a trial whose senders fell short of
// its load, before the search hears of it. A load-limited trial lowers the search's max load for good, and
// on a shared host a sender's slice comes late now and then: a first shortfall at a load runs the same
// request again, untold. Not told either as a trial at the lower load it did offer: senders that fell
// behind catch up in bursts, and a policer drops those (lab circuit: 0.4 % lost at 18 452 pps offered
// unevenly, none at 20 000 offered evenly). A second shortfall in a row at that load is the senders' limit,
// told; so is a first one right after a told shortfall above any load offered in full (the senders at
// their limit: each step down would cost two trials).
#include "core/search/mlr_search.hpp"

#include <optional>

namespace nb::search {

class shortfall_rule {
 public:
  // Called for every search trial, in order (the unpaced MRR and trials a stop cut short are none). True: `t` is a
  // first shortfall at its load; run the same request again and tell the search nothing of this one. False: tell the
  // search `t`.
  bool run_again(const trial_result& t);

 private:
  std::optional<double> short_at_;  // the load of the trial run again, until the next trial
  bool limited_before_ = false;     // the last trial told was load-limited
  double offered_in_full_ = 0;      // the highest load a told trial offered in full
};

}  // namespace nb::search
