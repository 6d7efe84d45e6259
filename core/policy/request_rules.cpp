#include "core/policy/request_rules.hpp"

#include "core/sys/socket.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nb {
namespace {

[[noreturn]] void reject(const std::string& why) { throw protocol_error("rejected: " + why); }

// Whether this host has the congestion control is netserve's to ask.
void check_tcp(const test_request& r) {
  if (r.kind != test_kind::tcp_stream && (r.recv_size != 0 || r.zerocopy || r.send_copy || r.recv_copy))
    reject("receive size, zero-copy and copying sends or receives are TCP_STREAM options");
  if (r.zerocopy && r.send_copy) reject("zero-copy and copying sends: one way of sending, not both");
  if (!is_tcp(r.kind) && !r.congestion.empty()) reject("congestion control is a TCP option");
  if (r.recv_size > max_tcp_message_size)
    reject(fmt::format("TCP receive size exceeds {} MiB", max_tcp_message_size >> 20));
  if (!r.congestion.empty() && !valid_congestion_name(r.congestion)) reject("bad congestion-control name");
}

void check_rr(const test_request& r) {
  if (!is_rr(r.kind)) {
    if (r.response_size != 0 || r.burst != 0) reject("response size and burst are request/response options");
    return;
  }
  if (r.reverse) reject("a request/response test has no reverse");
  const std::uint32_t most = r.kind == test_kind::udp_rr ? max_udp_message_size : max_tcp_message_size;
  if (r.response_size < 1 || r.response_size > most) reject(fmt::format("response size outside 1..{}", most));
  if (r.burst > max_rr_burst) reject(fmt::format("burst {} exceeds {}", r.burst, max_rr_burst));
}

}  // namespace

void check_request(const test_request& r, const request_bounds& bounds) {
  check_tcp(r);
  if (!(r.duration_s > 0) || r.duration_s > bounds.max_duration_s)
    reject(fmt::format("duration {} s is outside (0, {}]", r.duration_s, bounds.max_duration_s));
  if (r.streams < 1 || r.streams > bounds.max_streams)
    reject(fmt::format("{} streams is outside [1, {}]", r.streams, bounds.max_streams));
  if (r.message_size < 1) reject("message size must be at least 1 byte");
  check_rr(r);
  if (is_udp(r.kind)) {
    if (r.message_size > max_udp_message_size)
      reject(fmt::format("UDP message size {} exceeds {}", r.message_size, max_udp_message_size));
    if (r.data_ports.size() != r.streams) reject("one data port per stream is required");
    for (auto port : r.data_ports)
      if (port == 0) reject("data port 0");
  } else if (r.message_size > max_tcp_message_size) {
    reject(fmt::format("TCP message size exceeds {} MiB", max_tcp_message_size >> 20));
  }
  // Reverse TCP holds one message per stream in this process.
  if (r.reverse && r.kind == test_kind::tcp_stream &&
      std::uint64_t{r.message_size} * r.streams > max_reverse_tcp_buffer_bytes)
    reject(fmt::format("streams x message size exceeds {} MiB", max_reverse_tcp_buffer_bytes >> 20));
  if (!(r.pps >= 0) || r.pps > max_request_pps) reject("bad packet rate");
  if (r.interval_s != 0 && !(r.interval_s >= min_interval_s && r.interval_s <= r.duration_s))
    reject(fmt::format("interval must be 0 or between {:g} s and the duration", min_interval_s));
  if (r.dscp < -1 || r.dscp > max_dscp) reject(fmt::format("DSCP outside 0..{}", max_dscp));
  if (r.segmentation != "auto" && r.segmentation != "on" && r.segmentation != "off")
    reject("segmentation is none of auto, on, off");
  if (r.cpu < -1 || r.cpu > max_cpu_number) reject("bad CPU number");
  if (r.rcvbuf < 0 || r.sndbuf < 0 || r.rcvbuf > max_socket_buffer_request || r.sndbuf > max_socket_buffer_request)
    reject("bad socket buffer size");
  if (r.mss != 0 && (r.mss < min_mss || r.mss > max_mss)) reject(fmt::format("MSS outside {}..{}", min_mss, max_mss));
}

std::uint32_t udp_bytes_sent(const test_request& r) noexcept {
  if (r.kind == test_kind::udp_rr) return r.response_size;
  if (r.kind == test_kind::udp_stream && r.reverse) return r.message_size;
  return 0;
}

std::string own_socket_refusal(std::uint16_t port, const std::string& address) {
  return fmt::format(
      "rejected: data port {} on {} is one of netserve's own sockets: a test's datagrams never go to "
      "netserve itself",
      port, address);
}

void check_data_peer(const test_request& r, const data_peer& peer) {
  if (!is_udp(r.kind)) return;
  if (peer.local && peer.own_ports) {
    for (auto port : r.data_ports)
      if (peer.own_ports->contains(port)) throw protocol_error(own_socket_refusal(port, peer.address));
  }
  const std::uint32_t size = udp_bytes_sent(r);
  if (size == 0 || peer.path_mtu <= 0) return;
  const int room = max_udp_payload(peer.path_mtu, peer.family);
  if (static_cast<std::int64_t>(size) > room)
    reject(
        fmt::format("message of {} bytes does not fit the path MTU {} to {} (largest UDP payload {}); "
                    "netserve does not fragment",
                    size, peer.path_mtu, peer.address, room));
}

}  // namespace nb
