#pragma once
// What netserve accepts in a test request, apart from what only its host can say (a congestion control
// it has loaded, its budget): the protocol's limits and the operator's, and where the test's datagrams
// may go. Pure functions of the request and what the server knows, so the fuzz target runs them on every
// request it decodes. Each refusal is a protocol_error "rejected: ..." that names the field.
#include "core/base/limits.hpp"
#include "core/base/port_set.hpp"
#include "core/wire/native/protocol.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace nb {

// The operator's limits a request is held to (netserve --max-duration, --max-streams).
struct request_bounds {
  double max_duration_s = 3600;
  std::uint32_t max_streams = max_streams_per_test;
};

// Sizes, counts, durations and option combinations; throws protocol_error.
void check_request(const test_request& r, const request_bounds& bounds);

// The bytes of each datagram netserve itself sends for the test: a UDP_RR answer, a reverse UDP_STREAM
// message; 0 when it sends none (forward UDP_STREAM, TCP).
std::uint32_t udp_bytes_sent(const test_request& r) noexcept;

// Where the test's datagrams come from and go to: (the control connection's peer address, each data port).
struct data_peer {
  std::string address;                  // for the message
  bool local = false;                   // the address is one of this host's own (is_local_address)
  const port_set* own_ports = nullptr;  // netserve's sockets' ports (netserve/server/own_sockets.hpp)
  int path_mtu = 0;                     // towards the address; 0: unknown (not checked)
  int family = 0;                       // of the path: AF_INET or AF_INET6 (an IPv4-mapped peer is AF_INET)
};

// A UDP test's data peer can never be one of netserve's own sockets: a local address and one of its
// ports (its answers and reverse datagrams would come back to it, and it would answer itself). And what
// netserve sends must fit the path MTU: it sends with don't-fragment set, as netload does. Throws
// protocol_error, with netload's own words for a message that does not fit.
void check_data_peer(const test_request& r, const data_peer& peer);
// Why a datagram to `port` on `address` is refused: it would reach netserve itself.
std::string own_socket_refusal(std::uint16_t port, const std::string& address);

}  // namespace nb
