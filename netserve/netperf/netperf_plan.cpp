#include "netserve/netperf/netperf_plan.hpp"

#include "core/base/clock.hpp"
#include "core/base/limits.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/sys/socket.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

namespace nb::serve {

namespace np = netperf;

const char* netperf_test_name(const np::omni_request& r) noexcept {
  const bool rr = r.direction == (np::dir_recv | np::dir_xmit);
  if (r.protocol == np::ipproto_udp) return rr ? "UDP_RR" : "UDP_STREAM";
  return rr ? "TCP_RR" : "TCP_STREAM";
}

std::optional<netperf_refusal> check_netperf_request(const np::omni_request& r, const server_options& o) {
  const bool stream = r.direction == np::dir_recv, rr = r.direction == (np::dir_recv | np::dir_xmit);
  if (!stream && !rr)
    return netperf_refusal{EOPNOTSUPP,
                           fmt::format("direction {:#x} (netserve serves STREAM and RR tests)", r.direction)};
  if (r.flags & np::flag_connect_test) return netperf_refusal{EOPNOTSUPP, "a connection test (TCP_CRR, TCP_CC)"};
  const bool tcp = r.protocol == np::ipproto_tcp && r.socket_type == np::nst_stream;
  const bool udp = r.protocol == np::ipproto_udp && r.socket_type == np::nst_dgram;
  if (!tcp && !udp)
    return netperf_refusal{EPROTONOSUPPORT, fmt::format("protocol {} on socket type {}", r.protocol, r.socket_type)};
  if (r.ipfamily != np::nf_inet && r.ipfamily != np::nf_inet6)
    return netperf_refusal{EAFNOSUPPORT, fmt::format("address family {}", r.ipfamily)};
  if (r.test_length <= 0) return netperf_refusal{EINVAL, "a test bounded by a count, or unbounded (-l 0 or negative)"};
  if (r.test_length > o.max_duration_s)
    return netperf_refusal{EINVAL, fmt::format("-l {} over {:g} s", r.test_length, o.max_duration_s)};
  if (rr) {
    const std::int64_t most = udp ? max_udp_message_size : max_tcp_message_size;
    if (r.request_size < 1 || r.request_size > most || r.response_size < 1 || r.response_size > most)
      return netperf_refusal{EINVAL, fmt::format("-r {},{} outside 1..{}", r.request_size, r.response_size, most)};
  }
  if (r.data_port != 0 && r.data_port < 1024)
    return netperf_refusal{EACCES, fmt::format("data port {} (below 1024)", r.data_port)};
  if (r.data_port > 65535) return netperf_refusal{EINVAL, fmt::format("data port {}", r.data_port)};
  if (!r.cong_control.empty() && (!tcp || !valid_congestion_name(r.cong_control) || !congestion_loaded(r.cong_control)))
    return netperf_refusal{EINVAL, fmt::format("congestion control '{}'", printable_bounded(r.cong_control))};
  return std::nullopt;
}

std::uint32_t tcp_read_size(const np::omni_request& r) noexcept {
  const bool chosen = r.receive_size != 0 && r.receive_size != 0xffffffffU;
  return chosen ? std::min<std::uint32_t>(r.receive_size, 1u << 20) : 128u << 10;
}

netperf_plan data_plan_of(const np::omni_request& r, const endpoint& peer) {
  netperf_plan plan;
  plan.udp = r.protocol == np::ipproto_udp;
  plan.rr = r.direction != np::dir_recv;
  plan.request_size = static_cast<std::uint32_t>(std::max(r.request_size, 0));
  plan.response_size = static_cast<std::uint32_t>(std::max(r.response_size, 0));
  plan.receive_size = tcp_read_size(r);
  plan.peer = peer;
  // Padded as netserver's: only a client that vanished runs it out.
  plan.deadline_mono_ns = mono_ns() + s_to_ns(r.test_length + np::pad_time_s);
  return plan;
}

np::omni_setup setup_of(const np::omni_request& r) {
  np::omni_setup setup;
  const bool rr = r.direction != np::dir_recv;
  setup.receive_size = rr                              ? static_cast<std::uint32_t>(r.request_size)
                       : r.protocol == np::ipproto_udp ? max_udp_message_size
                                                       : tcp_read_size(r);
  setup.send_size = rr ? static_cast<std::uint32_t>(r.response_size) : r.send_size;
  setup.recv_width = setup.send_width = 1;
  setup.flags = r.flags & np::flag_no_delay;  // no CPU figures
  setup.test_length = static_cast<std::uint32_t>(r.test_length);
  return setup;
}

np::omni_results omni_results_of(const netperf_counts& c, const np::omni_setup& setup, double seconds) {
  np::omni_results out;
  out.bytes_received = c.bytes_received;
  out.recv_calls = np::field32(c.recv_calls);
  out.recv_buf_size = setup.recv_buf_size;
  out.bytes_sent = c.bytes_sent;
  out.send_calls = np::field32(c.send_calls);
  out.send_buf_size = setup.send_buf_size;
  out.failed_sends = np::field32(c.failed_sends);
  out.trans_received = np::field32(c.transactions);
  out.elapsed_time = static_cast<float>(seconds);
  return out;
}

}  // namespace nb::serve
