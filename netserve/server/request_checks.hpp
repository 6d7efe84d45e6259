#pragma once
// The checks every served test passes, whichever protocol asked for it.
#include "core/policy/request_rules.hpp"
#include "core/sys/endpoint.hpp"
#include "netserve/server/own_sockets.hpp"
#include "netserve/server/served_port.hpp"

namespace nb::serve {

// Throws protocol_error ("rejected: ...") for a request this server will not run: out of the operator's
// limits, or not meaningful.
void validate_request(const test_request& r, const server_options& o);
// Where a UDP test's datagrams go (the client's address, whether it is this host's, the path MTU towards
// it), for check_data_peer (core/policy/request_rules.hpp). Throws protocol_error when there is no path.
data_peer peer_of_test(const test_request& r, const endpoint& peer, const own_sockets& own);

}  // namespace nb::serve
