#include "netserve/server/request_checks.hpp"

#include "core/sys/socket.hpp"

#include <fmt/format.h>

namespace nb::serve {

namespace {

// Tried now, so the client hears at once, not when its data connections come.
void check_congestion(const test_request& r) {
  if (r.congestion.empty()) return;
  // Or a root netserve's probe would load a kernel module of the client's choosing.
  if (!congestion_loaded(r.congestion))
    throw protocol_error("rejected: " + congestion_unavailable(r.congestion) + "; load it on this host first");
  try {
    set_tcp_congestion(make_socket(AF_INET, SOCK_STREAM).get(), r.congestion);
  } catch (const std::exception& e) {
    throw protocol_error(fmt::format("rejected: {}", e.what()));
  }
}

}  // namespace

data_peer peer_of_test(const test_request& r, const endpoint& peer, const own_sockets& own) {
  data_peer p;
  if (!is_udp(r.kind)) return p;
  const endpoint to = peer.unmapped();
  p.address = to.address();
  p.local = is_local_address(to);
  p.own_ports = &own.ports;
  p.family = to.family();
  if (udp_bytes_sent(r) > 0) {
    endpoint first = to;
    first.set_port(r.data_ports.front());
    try {
      p.path_mtu = path_mtu_to(first);
    } catch (const std::system_error& e) {
      throw protocol_error(fmt::format("rejected: no path to {}: {}", p.address, e.what()));
    }
  }
  return p;
}

void validate_request(const test_request& r, const server_options& o) {
  check_request(r, {o.max_duration_s, o.max_streams});
  check_congestion(r);
}

}  // namespace nb::serve
