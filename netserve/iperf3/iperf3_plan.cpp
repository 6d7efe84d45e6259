// An iperf3 client's parameters, checked and made into the served_tests that run them.
#include "core/base/limits.hpp"
#include "netserve/iperf3/iperf3_session.hpp"
#include "netserve/server/request_checks.hpp"

#include <fmt/format.h>

namespace nb::serve {

namespace i3 = iperf3;

namespace {
constexpr std::uint32_t tcp_default_len = 128u << 10;  // iperf3's
constexpr std::uint32_t udp_default_len = 1460;
}  // namespace

std::optional<iperf3_session::refusal> iperf3_session::check(const i3::params& p) const {
  const server_options& o = shared_->options;
  using st = i3::state;
  using er = i3::error;
  auto no = [](er code, std::string why) { return refusal{st::server_error, code, std::move(why)}; };
  const bool sends = p.reverse || p.bidirectional;
  if (p.sctp || p.tcp == p.udp) return no(er::protocol, "SCTP, or neither TCP nor UDP");
  if (p.mptcp) return no(er::unimplemented, "--mptcp");
  if (!p.authtoken.empty()) return no(er::auth_test, "iperf3 authentication (netserve has --psk-file for netload)");
  if (!p.unknown.empty()) return no(er::unimplemented, fmt::format("unknown parameter '{}'", p.unknown.front()));
  if (p.reverse && p.bidirectional) return no(er::reverse_bidir, "--reverse with --bidir");
  if (p.omit != 0) return no(er::unimplemented, "--omit");
  if (p.fqrate != 0) return no(er::unimplemented, "--fq-rate");
  if (sends && (p.num != 0 || p.blockcount != 0)) return no(er::unimplemented, "-n / -k with the server sending");
  if (sends && (p.flowlabel != 0 || p.repeating_payload))
    return no(er::unimplemented, "--flowlabel / --repeating-payload with the server sending");
  if (sends && (p.tos & 3) != 0) return no(er::unimplemented, "a TOS with ECN bits");
  // The port's shared socket sends with the kernel's path-MTU default.
  if (sends && p.udp && p.dont_fragment != 0) return no(er::unimplemented, "--dont-fragment with the server sending");
  if (p.parallel < 1 || p.parallel > static_cast<std::int64_t>(o.max_streams))
    return no(er::num_streams, fmt::format("-P {} outside 1..{}", p.parallel, o.max_streams));
  const bool by_size = p.num != 0 || p.blockcount != 0;
  if ((p.time <= 0 && !by_size) || p.time < 0 || static_cast<double>(p.time) > o.max_duration_s)
    return no(er::duration, fmt::format("-t {} outside 1..{:g}", p.time, o.max_duration_s));
  if (p.len < 0 || (p.udp && p.len > static_cast<std::int64_t>(max_udp_message_size)))
    return no(p.udp ? er::udp_block_size : er::block_size, fmt::format("-l {}", p.len));
  if (p.len > static_cast<std::int64_t>(max_tcp_message_size)) return no(er::block_size, fmt::format("-l {}", p.len));
  if (p.window < 0 || p.window > max_socket_buffer_request) return no(er::buf_size, fmt::format("-w {}", p.window));
  if (p.mss < 0 || p.mss > static_cast<std::int64_t>(max_mss)) return no(er::mss, fmt::format("-M {}", p.mss));
  if (p.server_affinity < -1 || p.server_affinity > max_cpu_number)
    return no(er::unimplemented, fmt::format("-A outside 0..{}", max_cpu_number));
  return std::nullopt;
}

// The client's sending streams' test first.
std::optional<iperf3_session::refusal> iperf3_session::plan_tests() {
  const i3::params& p = params_;
  const server_options& o = shared_->options;
  test_request base;
  base.kind = p.udp ? test_kind::udp_stream : test_kind::tcp_stream;
  base.message_size = p.len > 0 ? static_cast<std::uint32_t>(p.len) : (p.udp ? udp_default_len : tcp_default_len);
  base.duration_s = p.time > 0 ? static_cast<double>(p.time) : o.max_duration_s;
  base.streams = static_cast<std::uint32_t>(p.parallel);
  base.rcvbuf = base.sndbuf = static_cast<std::int32_t>(std::min<std::int64_t>(p.window, o.max_socket_buffer));
  base.cpu = static_cast<std::int32_t>(p.server_affinity);
  base.congestion = p.congestion;
  base.client_version = "iperf3 " + p.client_version;
  if (base.kind == test_kind::udp_stream) base.data_ports.assign(base.streams, 1);  // the hellos tell
  if (!p.reverse) requests_.push_back(base);
  if (p.reverse || p.bidirectional) {
    test_request r = base;
    r.reverse = true;
    // -b is per stream, as iperf3's sender applies it.
    r.pps = p.bandwidth ? static_cast<double>(p.bandwidth) * base.streams / (8.0 * base.message_size) : 0;
    r.dscp = p.tos ? static_cast<std::int32_t>(p.tos >> 2) : -1;
    requests_.push_back(r);
  }
  for (const test_request& r : requests_) {
    try {
      validate_request(r, o);
    } catch (const protocol_error& e) {
      const bool congestion =
          !r.congestion.empty() && std::string_view(e.what()).find("congestion") != std::string_view::npos;
      return refusal{i3::state::server_error, congestion ? i3::error::set_congestion : i3::error::unimplemented,
                     e.what()};
    }
  }
  return std::nullopt;
}

}  // namespace nb::serve
