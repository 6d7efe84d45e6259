#pragma once
// netserve's own sockets, which nothing it sends may reach: a UDP_RR socket would answer netserve's own
// datagrams, a reverse stream aimed at one would come back into netserve (and be answered, many times its
// size). Two sets of port numbers on this host's addresses, changed by the control plane, read by any
// thread (core/base/port_set.hpp):
//  - `ports`: every port a netserve socket is bound to: each -p port (TCP and UDP, it listens and sends on
//    them) and, while its test lives, each netperf data socket;
//  - `targets`: every port on this host a test sends to: a reverse stream's data ports, a UDP_RR test's
//    sources (its answers go there), while the test lives.
// A test may not send to one of `ports`; a netperf data socket may not be bound to one of `targets`, so
// neither order of the two (a stream aimed first, a socket bound after it) lands anything on netserve.
#include "core/base/port_set.hpp"
#include "core/sys/endpoint.hpp"
#include "core/sys/socket.hpp"

#include <memory>
#include <vector>

namespace nb::serve {

struct own_sockets {
  port_set ports;
  port_set targets;
};

// A datagram to or from `e` would be netserve's own: one of its ports, on an address of this host.
inline bool is_netserve_itself(const endpoint& e, const own_sockets& own) {
  return own.ports.contains(e.port()) && is_local_address(e);
}

// `ports` in one of `own`'s sets for as long as the claim lives.
inline port_claim claim_ports(const std::shared_ptr<own_sockets>& own, std::vector<std::uint16_t> ports) {
  return port_claim(std::shared_ptr<port_set>(own, &own->ports), std::move(ports));
}
inline port_claim claim_targets(const std::shared_ptr<own_sockets>& own, std::vector<std::uint16_t> ports) {
  return port_claim(std::shared_ptr<port_set>(own, &own->targets), std::move(ports));
}

}  // namespace nb::serve
