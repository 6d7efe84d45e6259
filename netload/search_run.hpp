#pragma once
// netload --search: RFC 9971's MLRsearch (core/search/mlr_search.hpp, the harness's copy too) against one
// netserve. An unpaced trial first (MRR), then each trial the search asks for is one ordinary test at
// --pps = its load on a new control connection, with a settle pause between trials.
#include "netload/cli.hpp"

namespace nb::load {

// Runs the search, printing a line per trial (stdout, or stderr under --json) and the results; returns
// the exit status: 0 the goals ended the search, 1 it failed or a cap ended it first (said on stderr),
// 128 + the signal when the user stopped it (no trial starts after the stop).
int run_search(const client_options& o);

}  // namespace nb::load
