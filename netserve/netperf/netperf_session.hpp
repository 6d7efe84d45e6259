#pragma once
// A stock netperf 2.7 client on one of netserve's ports, served as netserver serves it.
// docs/serving-stock-clients.md#netperf
#include "netserve/server/served_port.hpp"
#include "netserve/server/server_budget.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>

namespace nb::serve {

// Once its first bytes have arrived. Logs its own failures; nothing escapes.
asio::awaitable<void> serve_netperf(tcp::socket socket, std::shared_ptr<served_port> port,
                                    std::shared_ptr<server_shared> shared, budget::hold unit);

}  // namespace nb::serve
