#include "netload/cli/cli_finish.hpp"

#include "core/base/limits.hpp"
#include "core/base/units.hpp"
#include "core/base/whole_number.hpp"
#include "core/sys/socket.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

namespace nb::load::detail {
namespace {

std::pair<std::int32_t, std::int32_t> parse_cpu_pair(const std::string& text) {
  // "N" (both), "l,r", "l," or ",r"
  auto parse = [&](const std::string& s) -> std::int32_t {
    if (s.empty()) return -1;
    if (auto cpu = parse_whole<std::int32_t>(s, 0)) return *cpu;
    throw usage_error(fmt::format("bad CPU list '{}' for -T", text));
  };
  auto comma = text.find(',');
  if (comma == std::string::npos) return {parse(text), parse(text)};
  return {parse(text.substr(0, comma)), parse(text.substr(comma + 1))};
}

std::int32_t buffer_size(const std::string& text, const char* opt) {
  try {
    auto v = parse_size(text);
    if (v > max_socket_buffer_request) throw std::invalid_argument("too large");
    return static_cast<std::int32_t>(v);
  } catch (const std::invalid_argument& e) {
    throw usage_error(fmt::format("{}: {}", opt, e.what()));
  }
}

// A CPU this process may not run on would be a silent no-op (netperf warns and runs anyway).
void check_local_cpu(std::int32_t cpu, const std::string& text) {
  if (cpu < 0) return;
  const auto allowed = allowed_cpus();
  if (std::find(allowed.begin(), allowed.end(), cpu) != allowed.end()) return;
  throw usage_error(
      fmt::format("-T {}: this process may not run on CPU {} (it may run on {})", text, cpu, fmt::join(allowed, ",")));
}

void finish_recv_mode(client_options& o, const raw_options& raw) {
  std::vector<std::pair<std::string, recv_mode>> said;
  if (!raw.recv_mode.empty()) {
    const auto m = parse_recv_mode(raw.recv_mode);
    if (!m) throw usage_error(fmt::format("--recv-mode '{}': the modes are auto, copy and discard", raw.recv_mode));
    said.emplace_back("--recv-mode " + raw.recv_mode, *m);
  }
  if (raw.recv_copy) said.emplace_back("--recv-copy", recv_mode::copy);
  if (raw.recv_discard) said.emplace_back("--recv-discard", recv_mode::discard);
  if (said.empty()) return;
  for (const auto& [name, mode] : said)
    if (mode != said.front().second)
      throw usage_error(fmt::format("{} and {}: one receive mode, not both", said.front().first, name));
  if (o.kind != test_kind::tcp_stream)
    throw usage_error(fmt::format("{} applies to TCP_STREAM only", said.front().first));
  o.receive = said.front().second;
}

void finish_gso(client_options& o, const raw_options& raw) {
  if (raw.gso && raw.no_gso) throw usage_error("--gso and --no-gso: one way of sending, not both");
  o.gso = raw.gso ? gso_mode::on : raw.no_gso ? gso_mode::off : gso_mode::automatic;
}

void finish_tcp(client_options& o, const raw_options& raw) {
  const bool tcp = o.kind == test_kind::tcp_stream;
  if (!o.congestion.empty() && !is_tcp(o.kind)) throw usage_error("-K (congestion control) applies to TCP tests only");
  if (!o.congestion.empty() && !valid_congestion_name(o.congestion))
    throw usage_error(
        fmt::format("-K '{}': a congestion-control name is 1 to 15 letters, digits, '_' or '-'", o.congestion));
  if (o.zerocopy && !tcp) throw usage_error("--zerocopy applies to TCP_STREAM only");
  if (o.send_copy && !tcp) throw usage_error("--send-copy applies to TCP_STREAM only");
  finish_recv_mode(o, raw);
  if (o.send_copy && o.zerocopy) throw usage_error("--send-copy and --zerocopy: one way of sending, not both");
  // netperf's -M is the receiver's bytes per recv().
  const bool by_letter = !raw.remote_recv_size.empty();
  if (by_letter && !raw.recv_size.empty() && raw.remote_recv_size != raw.recv_size)
    throw usage_error("-M and --recv-size are one setting (the receiver's bytes per recv()): give one");
  const std::string& text = by_letter ? raw.remote_recv_size : raw.recv_size;
  const char* name = by_letter ? "-M" : "--recv-size";
  if (text.empty()) return;
  if (!tcp)
    throw usage_error(fmt::format("{} (the receiver's bytes per recv()) applies to TCP_STREAM only{}", name,
                                  by_letter ? "; the MSS is --mss" : ""));
  auto size = buffer_size(text, name);
  if (size < 1 || static_cast<std::uint32_t>(size) > max_tcp_message_size)
    throw usage_error(fmt::format("{} must be between 1 byte and {} MiB", name, max_tcp_message_size >> 20));
  o.recv_size = static_cast<std::uint32_t>(size);
}

// -r REQ,RESP as netperf's: one size gives both.
void finish_rr(client_options& o, const raw_options& raw) {
  if (raw.burst && raw.test_burst) throw usage_error("give --burst or -- -b, not both");
  o.burst = raw.burst ? *raw.burst : raw.test_burst.value_or(0);
  if (!is_rr(o.kind)) {
    if (!raw.rr_sizes.empty()) throw usage_error("-r (request/response sizes) applies to UDP_RR and TCP_RR only");
    if (o.burst) throw usage_error("--burst (-- -b) applies to UDP_RR and TCP_RR only");
    return;
  }
  if (!raw.message.empty()) throw usage_error("-m does not apply to a request/response test: give -- -r REQ,RESP");
  if (o.reverse) throw usage_error("--reverse: a request/response test has no reverse (both directions carry it)");
  if (o.rate_bps > 0)
    throw usage_error("--rate does not apply to a request/response test: --pps gives transactions per second");
  if (o.bidir) throw usage_error("--bidir: a request/response test carries both directions already");
  o.message_size = o.response_size = 1;  // netperf's default
  if (!raw.rr_sizes.empty()) {
    const auto comma = raw.rr_sizes.find(',');
    const std::string req = raw.rr_sizes.substr(0, comma);
    const std::string resp = comma == std::string::npos ? req : raw.rr_sizes.substr(comma + 1);
    const std::uint32_t most = o.kind == test_kind::udp_rr ? max_udp_message_size : max_tcp_message_size;
    auto size = [&](const std::string& text) {
      if (text.empty()) return std::uint32_t{1};
      auto v = buffer_size(text, "-r");
      if (v < 1 || static_cast<std::uint32_t>(v) > most)
        throw usage_error(fmt::format("-r {}: each size must be between 1 and {} bytes", raw.rr_sizes, most));
      return static_cast<std::uint32_t>(v);
    };
    o.message_size = size(req);
    o.response_size = size(resp);
  }
  // Under 8 bytes there is no room for the transaction's number: matched in order, a late answer would
  // shift every later one.
  if (o.kind == test_kind::udp_rr && o.burst > 0 && std::min(o.message_size, o.response_size) < 8)
    throw usage_error(
        fmt::format("UDP_RR -r {},{} with a burst: requests and answers need 8 bytes or more, room for "
                    "the transaction's number by which a late answer is told apart",
                    o.message_size, o.response_size));
}

// Refused at once, in one line, rather than half-done.
void finish_iperf3_peer(client_options& o) {
  auto no = [](std::string_view what) {
    throw usage_error(fmt::format("--peer iperf3: {} (iperf3's protocol cannot carry it)", what));
  };
  if (is_rr(o.kind))
    no(fmt::format("{} is a request/response test; iperf3 runs UDP_STREAM and TCP_STREAM only", to_string(o.kind)));
  if (o.bidir) no("--bidir");
  if (o.omit_s > 0) no("--omit");
  if (!o.psk_file.empty()) no("--psk-file (a netserve key)");
  if (o.remote_cpu_util) no("-C (the remote host's CPU figures)");
  if (!o.reverse && (o.recv_size || o.receive != recv_mode::automatic))
    no("--recv-size / --recv-mode for iperf3's receiver");
  if (o.reverse && (o.zerocopy || o.send_copy)) no("--zerocopy / --send-copy for iperf3's sender");
  if (o.kind == test_kind::udp_stream && o.message_size < 16)
    no(fmt::format("-m {}: iperf3's datagrams carry a 16-byte header (time and 64-bit count)", o.message_size));
}

void finish_peer(client_options& o, const raw_options& raw) {
  if (raw.peer == "netserve") o.peer = peer_kind::netserve;
  else if (raw.peer == "iperf3") o.peer = peer_kind::iperf3;
  else if (raw.peer == "netserver") o.peer = peer_kind::netserver;
  else throw usage_error(fmt::format("--peer '{}': the peers are netserve, iperf3 and netserver", raw.peer));
  if (o.peer == peer_kind::iperf3) finish_iperf3_peer(o);
}

// The left-out part ends at an interval's end, where both sides count; the test runs that much longer.
void finish_omit(client_options& o) {
  if (o.omit_s == 0) return;
  if (is_rr(o.kind)) throw usage_error("--omit applies to UDP_STREAM and TCP_STREAM");
  if (o.omit_s < min_interval_s) throw usage_error(fmt::format("--omit must be 0 or at least {:g} s", min_interval_s));
  if (o.interval_s == 0) o.interval_s = o.omit_s;
  const double intervals = o.omit_s / o.interval_s;
  if (std::fabs(intervals - std::round(intervals)) > 1e-9)
    throw usage_error(
        fmt::format("--omit {:g} is not a whole number of --interval {:g} s: the left-out part ends at an "
                    "interval's end, where both sides count",
                    o.omit_s, o.interval_s));
  o.duration_s += o.omit_s;
}

}  // namespace

void finish(client_options& o, const raw_options& raw) {
  auto kind = parse_test_kind(raw.test);
  if (!kind)
    throw usage_error(fmt::format("test '{}' is not supported (UDP_STREAM, TCP_STREAM, UDP_RR, TCP_RR)", raw.test));
  o.kind = *kind;
  if (!raw.cpus.empty()) std::tie(o.local_cpu, o.remote_cpu) = parse_cpu_pair(raw.cpus);
  check_local_cpu(o.local_cpu, raw.cpus);
  if (!raw.local_buf.empty()) o.local_buffer = buffer_size(raw.local_buf, "-s");
  if (!raw.remote_buf.empty()) o.remote_buffer = buffer_size(raw.remote_buf, "-S");
  if (raw.routing == 0) throw usage_error("-R 0 (SO_DONTROUTE) is not supported: it keeps packets off routed circuits");
  if (!raw.rate.empty()) {
    try {
      o.rate_bps = parse_rate(raw.rate);
    } catch (const std::invalid_argument& e) {
      throw usage_error(fmt::format("--rate: {}", e.what()));
    }
  }
  if (o.rate_bps > 0 && o.pps > 0) throw usage_error("give --rate or --pps, not both");
  if (!raw.units.empty()) {
    if (raw.units.size() != 1 || !rate_units::valid(raw.units[0]))
      throw usage_error(
          fmt::format("-f {}: the units are k, m or g (10^3, 10^6, 10^9 bit/s) or K, M or G (2^10, 2^20, "
                      "2^30 byte/s)",
                      raw.units));
    o.rate_units = raw.units[0];
  }
  finish_rr(o, raw);
  if (!raw.message.empty()) {
    auto m = buffer_size(raw.message, "-m");
    if (m < 1) throw usage_error("-m must be at least 1 byte");
    o.message_size = static_cast<std::uint32_t>(m);
  }
  // TCP: 1 MiB writes, fewer system calls per byte (bench/README.md#tcp-message-size).
  if (o.message_size == 0) o.message_size = o.kind == test_kind::udp_stream ? 1472 : 1024 * 1024;
  if (o.kind == test_kind::udp_stream && o.message_size > max_udp_message_size)
    throw usage_error(
        fmt::format("-m {}: a UDP datagram carries at most {} bytes", o.message_size, max_udp_message_size));
  if (o.kind == test_kind::tcp_stream && o.message_size > max_tcp_message_size)
    throw usage_error(fmt::format("-m {}: a TCP message is at most {} MiB (netserve holds one per stream)",
                                  o.message_size, max_tcp_message_size >> 20));
  if (o.mss && !is_tcp(o.kind)) throw usage_error("--mss applies to TCP tests only");
  finish_tcp(o, raw);
  finish_gso(o, raw);
  if (o.interval_s > 0 && (o.interval_s < min_interval_s || o.interval_s > o.duration_s))
    throw usage_error(fmt::format("--interval must be between {:g} s and the test duration", min_interval_s));
  if (o.json && o.json_stream) throw usage_error("give --json or --json-stream, not both");
  if (o.bidir && o.reverse) throw usage_error("give --bidir or --reverse, not both: --bidir runs both directions");
  if (o.start_at && o.start_on_stdin) throw usage_error("give --start-at or --start-on-stdin, not both");
  if (!o.mtu_peers.empty() && !o.host_info) throw usage_error("--mtu-to goes with --host-info");
  if (o.json_stream && o.interval_s == 0) o.interval_s = std::min(1.0, o.duration_s);
  finish_omit(o);
  finish_peer(o, raw);
}

}  // namespace nb::load::detail
