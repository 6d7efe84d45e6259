#pragma once
// netserve's own sockets, which nothing it sends may reach (it would answer or count itself), and the
// ports on this host its tests send to. docs/netserve.md#own-sockets
#include "core/base/port_set.hpp"
#include "core/sys/endpoint.hpp"
#include "core/sys/socket.hpp"

#include <memory>
#include <vector>

namespace nb::serve {

struct own_sockets {
  port_set ports;    // bound by netserve: no test sends there
  port_set targets;  // a test sends there: no netperf data socket binds there
};

// One of netserve's ports on an address of this host.
inline bool is_netserve_itself(const endpoint& e, const own_sockets& own) {
  return own.ports.contains(e.port()) && is_local_address(e);
}

// For as long as the claim lives.
inline port_claim claim_ports(const std::shared_ptr<own_sockets>& own, std::vector<std::uint16_t> ports) {
  return port_claim(std::shared_ptr<port_set>(own, &own->ports), std::move(ports));
}
inline port_claim claim_targets(const std::shared_ptr<own_sockets>& own, std::vector<std::uint16_t> ports) {
  return port_claim(std::shared_ptr<port_set>(own, &own->targets), std::move(ports));
}

}  // namespace nb::serve
