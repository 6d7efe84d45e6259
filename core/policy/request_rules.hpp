#pragma once
// What netserve accepts in a request, short of what only its host can say. Pure, for the fuzz target;
// a refusal is a protocol_error naming the field.
#include "core/base/limits.hpp"
#include "core/base/port_set.hpp"
#include "core/wire/native/protocol.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace nb {

// netserve --max-duration, --max-streams.
struct request_bounds {
  double max_duration_s = 3600;
  std::uint32_t max_streams = max_streams_per_test;
};

void check_request(const test_request& r, const request_bounds& bounds);

// 0 when netserve sends no datagram for the test.
std::uint32_t udp_bytes_sent(const test_request& r) noexcept;

struct data_peer {
  std::string address;
  bool local = false;  // one of this host's own addresses
  const port_set* own_ports = nullptr;
  int path_mtu = 0;  // 0: unknown, not checked
  int family = 0;    // an IPv4-mapped peer is AF_INET
};

// A UDP peer that is one of netserve's own sockets would have it answer itself; and what it sends must
// fit the path MTU, as it sets don't-fragment.
void check_data_peer(const test_request& r, const data_peer& peer);
std::string own_socket_refusal(std::uint16_t port, const std::string& address);

}  // namespace nb
