#pragma once
// The checks every served test passes, whichever protocol asked for it.
#include "core/policy/request_rules.hpp"
#include "core/sys/endpoint.hpp"
#include "netserve/server/own_sockets.hpp"
#include "netserve/server/served_port.hpp"

namespace nb::serve {

// Throws protocol_error ("rejected: ...").
void validate_request(const test_request& r, const server_options& o);
// For check_data_peer. Throws protocol_error when there is no path.
data_peer peer_of_test(const test_request& r, const endpoint& peer, const own_sockets& own);

}  // namespace nb::serve
