#pragma once
// netload --peer netserver: netperf's OMNI control protocol to a stock netserver 2.7, netload's data plane,
// netserver's results as the receiver's figures.
#include "core/result/result.hpp"
#include "netload/cli/cli.hpp"
#include "netload/native/client.hpp"

namespace nb::load {

// The result's "counted by": netserver does not tell its own version.
inline constexpr const char* netserver_peer_name = "netserver 2.7";

// Throws usage_error for what netserver cannot serve this way; a failed test is a result with ok = false.
test_result run_netserver_test(const client_options& o, const client_events& events);

}  // namespace nb::load
