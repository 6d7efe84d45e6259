#pragma once
// netload --peer netserver: a test against a stock netperf netserver (2.7), in netperf's own control
// protocol (core/wire/netperf/netperf_wire.hpp): netload asks for an OMNI test as netperf's UDP_STREAM / TCP_STREAM
// does, sends with its own data plane to the port netserver names, ends the test as netperf does (three
// zero-length datagrams, or the close) and takes the receiver's figures from netserver's results. The
// result is netload's usual one; its server_version says who counted the receiver's side.
#include "core/result/result.hpp"
#include "netload/cli/cli.hpp"
#include "netload/native/client.hpp"

namespace nb::load {

// Who counted the receiver's figures in such a result (the protocol's version: netserver does not say its own).
inline constexpr const char* netserver_peer_name = "netserver 2.7";

// Throws usage_error for what netserver cannot serve this way (RR, --reverse, several streams, a key...);
// a failure of the test itself comes back as a result with ok = false and the reason. `events`: armed
// (--start-on-stdin) and this side's interval samples (--interval).
test_result run_netserver_test(const client_options& o, const client_events& events);

}  // namespace nb::load
