#pragma once
// A stock netperf client (2.7) on one of netserve's ports, served as netserver serves it: its control
// connection carries fixed-size requests (core/wire/netperf/netperf_wire.hpp); for each OMNI request (TCP_STREAM,
// UDP_STREAM, TCP_RR, UDP_RR) netserve opens a data socket, names its port in the response, counts or
// answers the data there (netserve/netperf/netperf_data.hpp) and sends its counts as netperf's results. What
// netserve does not serve (another test, a count-bounded test, the CPU figures) is refused with netperf's
// own mechanism, an errno in the response, which the client prints and exits on.
//
// A connection is netperf's when its first bytes are a request: a type below 2^16 and a CPU word of -1 or
// a CPU number, where a netload frame has a length and then '{' (netserve/native/control_connection.cpp). Each
// test takes one of the port's test slots and its cost from the process budget, as netload's and iperf3's
// tests do, and is logged with the same line, `client=netperf 2.7`.
#include "netserve/server/served_port.hpp"
#include "netserve/server/server_budget.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>

namespace nb::serve {

// Serves a netperf control connection whose first bytes have arrived, to its end. Logs its own failures;
// nothing escapes.
asio::awaitable<void> serve_netperf(tcp::socket socket, std::shared_ptr<served_port> port,
                                    std::shared_ptr<server_shared> shared, budget::hold unit);

}  // namespace nb::serve
