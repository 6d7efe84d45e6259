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

// A trial's sender offered less than its load: `sent` datagrams against load x duration, more than the
// paced-target tolerance (1 %) short, with one datagram of slack (5 pps for 1 s sends 5). The count over
// the trial's duration, as the search reads the offered load, not the sender's rate over its own elapsed
// time, which takes in its last wake-up's lateness past the end (6 ms on a busy host: 0.6 % of a 1-s
// trial, none of it traffic missing). Such a trial says nothing of the path at that load.
bool offered_short(std::uint64_t sent, double load, double duration);

}  // namespace nb::load
