#pragma once
// netload --search: RFC 9971's MLRsearch (core/search/mlr_search.hpp, the harness's copy too) against one
// netserve. An unpaced trial first (MRR), then each trial the search asks for is one ordinary test at
// --pps = its load on a new control connection, with a settle pause between trials.
#include "netload/cli/cli.hpp"

#include <cstdint>

namespace nb::load {

// Runs the search, printing a line per trial (stdout, or stderr under --json) and the results; returns
// the exit status: 0 the goals ended the search, 1 it failed or a cap ended it first (said on stderr),
// 128 + the signal when the user stopped it (no trial starts after the stop).
int run_search(const client_options& o);

// A trial's sender offered less than its load: `sent` against load x duration, more than the paced-target
// tolerance short after one datagram of slack. Counted over the trial's duration, not the sender's own
// elapsed time, which takes in its last wake-up's lateness. Such a trial says nothing of the path.
bool offered_short(std::uint64_t sent, double load, double duration);

}  // namespace nb::load
