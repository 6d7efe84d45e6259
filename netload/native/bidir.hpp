#pragma once
// netload --bidir: both directions at once, as iperf3 --bidir and iperf2 -d. Two tests run on one
// io_context against the same netserve port, each with its own control connection (netserve serves
// concurrent tests on a port and tells UDP streams apart by source port): forward (netload sends) and
// reverse (netserve sends), started at one instant. No protocol change: to netserve they are two tests.
// Each direction reconciles on its own (sent = received + lost).
#include "netload/cli/cli.hpp"

namespace nb::load {

// Runs both directions and prints them: a table each and a line with their sum; with --json one object
// {"bidir": true, "start_instant": T, "forward": <result>, "reverse": <result>}; with --json-stream the
// interval and result lines carry "direction". Returns the worse exit status of the two (outcome.hpp).
int run_bidir(const client_options& o);

}  // namespace nb::load
