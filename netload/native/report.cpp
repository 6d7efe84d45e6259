#include "netload/native/report.hpp"

#include "core/base/clock.hpp"
#include "core/base/units.hpp"
#include "core/json/json_fields.hpp"
#include "core/sys/kernel_features.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace nb::load {
namespace {

rate_units units_of(char letter) { return rate_units{letter ? letter : 'm'}; }

std::string header(const test_result& r) {
  return fmt::format("{} TEST to {} port {}: message {} bytes, {} stream{}{}, batching {} / {}\n", to_string(r.kind),
                     r.host, r.port, r.message_size, r.streams, r.streams == 1 ? "" : "s", r.reverse ? ", reverse" : "",
                     r.sender.batching, r.receiver.batching);
}

std::string omit_line(const test_result& r) {
  if (!r.omit) return {};
  return fmt::format(
      "Omitted     the first {:g} s (--omit): the figures above are from there to the end; the loss and the "
      "reconciliation below count the whole run\n",
      r.omit->seconds);
}

std::string loss_line(const test_result& r) {
  const loss_figures& l = r.loss;
  if (!l.note.empty() && !l.reconciles) return fmt::format("Loss        does not reconcile: {}\n", l.note);
  std::string s = fmt::format("Loss        {} of {} ({:.2f} %)", l.packets,
                              r.omit ? r.omit->sent_packets : r.sender.packets, l.percent);
  if (const std::string_view stock = stock_receiver(r.receiver.batching); l.packets && !stock.empty())
    s += fmt::format(
        ": {} does not report its socket's drops: how many the socket dropped and how many the path lost is unknown",
        stock);
  else if (l.packets && drops_unknown(r.receiver.batching))
    s += ": the receiver's kernel cannot count its socket drops (no SO_MEMINFO): how many the socket dropped and "
         "how many the path lost is unknown (the verdict below uses the host's counters)";
  else if (l.packets)
    s += fmt::format(": {}{} dropped by the receiver's kernel (socket buffer full{}), {} lost on the path",
                     l.drops_estimated ? "about " : "", l.receiver_kernel_drops,
                     l.drops_shared ? ", socket shared with another test" : "", l.path);
  if (l.drops_estimated)
    s += fmt::format("\n            (the kernel counts dropped GRO buffers: {})", l.kernel_drop_buffers);
  return s + "\n";
}

// A ceiling counts from the sender's start (check_target): with --omit the window may be above it and met.
std::string ceiling_verdict(const test_result& r, const char* sender) {
  const target_figures& t = *r.target;
  if (!t.met) return fmt::format("CEILING EXCEEDED by {}", sender);
  if (t.error_percent < -target_tolerance_percent) return "under the ceiling (TCP's own rate)";
  const double window_ceiling =
      ceiling_bytes(t.requested_bits_per_second / 8, r.sender.seconds, r.streams, r.message_size);
  if (r.omit && static_cast<double>(r.sender.bytes) > window_ceiling)
    return "at the ceiling counted from the start (catching up on the left-out seconds)";
  return "at the ceiling";
}

std::string target_line(const test_result& r, char units) {
  if (!r.target) return {};
  const target_figures& t = *r.target;
  const char* unit = is_rr(r.kind) ? "transactions/s" : r.kind == test_kind::tcp_stream ? "messages/s" : "pps";
  const char* sender = r.reverse ? "the sender (netserve)" : "the sender";
  if (t.ceiling) {  // TCP, as iperf's -b: under it is TCP's own rate, no miss
    const std::string verdict = ceiling_verdict(r, sender);
    return fmt::format("Ceiling     {:.1f} {} ({}), sent {:.1f} ({}) ({:+.2f} %): {}\n", t.requested_pps, unit,
                       rate_text(t.requested_bits_per_second, units), t.achieved_pps,
                       rate_text(t.achieved_bits_per_second, units), t.error_percent, verdict);
  }
  std::string verdict = t.met                 ? "met"
                        : t.error_percent < 0 ? fmt::format("TARGET MISSED, {} could not keep the rate", sender)
                                              : fmt::format("TARGET MISSED, {} exceeded the rate", sender);
  return fmt::format("Target      {:.1f} {} ({}) requested, {:.1f} ({}) sent ({:+.2f} %): {}\n", t.requested_pps, unit,
                     rate_text(t.requested_bits_per_second, units), t.achieved_pps,
                     rate_text(t.achieved_bits_per_second, units), t.error_percent, verdict);
}

// netserve --engine xdp counts at the driver; its socket path's count goes beside.
std::string engine_line(const test_result& r) {
  if (!r.receiver_counted_by.empty()) return fmt::format("Receiver    counted by: {}\n", r.receiver_counted_by);
  if (!r.socket_received) return {};
  std::string gaps =
      r.seq_gaps ? fmt::format("; {} gap{} in the sequence", *r.seq_gaps, *r.seq_gaps == 1 ? "" : "s") : "";
  return fmt::format("Receiver    counted at the driver ({}); its socket path counted {} datagrams, {} bytes{}\n",
                     r.receive_engine, r.socket_received->first, r.socket_received->second, gaps);
}

std::string with_heads(const test_result& r, std::string_view heads, const rate_units& u) {
  return fmt::format("{}{}{}\n\n", header(r), heads, u.column());
}

// A buffer a stock server did not report is "-", never 0.
std::string buffer_cell(std::int32_t bytes) { return bytes > 0 ? std::to_string(bytes) : "-"; }

std::string unreported_buffers_line(const test_result& r) {
  const bool sender = r.sender.socket_buffer <= 0, receiver = r.receiver.socket_buffer <= 0;
  if (!sender && !receiver) return {};
  return fmt::format("Socket      the {} buffer size: not reported{}\n",
                     sender && receiver ? "sender's and the receiver's"
                     : sender           ? "sender's"
                                        : "receiver's",
                     r.server_version.empty() ? "" : " by " + r.server_version);
}

std::string udp_table(const test_result& r, char units) {
  const rate_units u = units_of(units);
  std::string s = with_heads(r,
                             "Socket  Message  Elapsed      Messages\n"
                             "Size    Size     Time         Okay Errors   Throughput\n"
                             "bytes   bytes    secs            #      #   ",
                             u);
  s += fmt::format("{:<7} {:>7}  {:>7.2f}  {:>10} {:>6}   {:>10.2f}\n", buffer_cell(r.sender.socket_buffer),
                   r.message_size, r.sender.seconds, r.sender.packets, r.sender.errors, u.of(r.sender.bits_per_second));
  s += fmt::format("{:<7} {:>7}  {:>7.2f}  {:>10} {:>6}   {:>10.2f}\n\n", buffer_cell(r.receiver.socket_buffer), "",
                   r.receiver.seconds, r.receiver.packets, "", u.of(r.receiver.bits_per_second));
  s += unreported_buffers_line(r);
  s += fmt::format("Packets/s   sender {:.1f}   receiver {:.1f}\n", r.sender.pps, r.receiver.pps);
  // An overdriven receiver's count is not a speed to quote (core/policy/verdict.hpp).
  if (r.receiver_note) s += fmt::format("Meaning     {}\n", *r.receiver_note);
  if (r.segmentation) s += fmt::format("Sent        {}\n", segmentation_words(*r.segmentation));
  s += target_line(r, units);
  s += omit_line(r);
  s += loss_line(r);
  s += engine_line(r);
  if (r.jitter_ms || r.out_of_order)  // the XDP engine keeps no transit times
    s += fmt::format("Jitter      {}   out of order {}\n",
                     r.jitter_ms ? fmt::format("{:.4f} ms", *r.jitter_ms) : "unknown", r.out_of_order.value_or(0));
  s += fmt::format("Path MTU    {}\n", r.path_mtu);
  return s;
}

std::string tcp_info_line(const test_result& r, char units) {
  // Without -f, units per rate: TCP_INFO's pacing can be far from the delivery.
  auto rate = [&](double bps) { return units ? rate_text(bps, units) : format_si(bps) + "bit/s"; };
  if (!r.tcp) return r.ok ? "TCP info    not sampled\n" : "";
  const tcp_figures& t = *r.tcp;
  std::string s = fmt::format("TCP info    {}",
                              t.congestion && !t.congestion->empty() ? *t.congestion : "congestion control unknown");
  if (t.retransmits) {
    s += fmt::format(", retransmits {}", *t.retransmits);
    if (t.retransmit_percent) s += fmt::format(" ({:.2f} %)", *t.retransmit_percent);
  }
  if (t.cwnd_bytes) s += fmt::format(", cwnd {}B", format_si(static_cast<double>(*t.cwnd_bytes)));
  if (t.rtt_us) {
    s += fmt::format(", RTT {:.0f} µs", *t.rtt_us);
    if (t.rttvar_us) s += fmt::format(" ± {:.0f}", *t.rttvar_us);
    if (t.streams.size() > 1 && t.rtt_max_us) s += fmt::format(" (max {})", *t.rtt_max_us);
  }
  const bool unpaced =
      std::any_of(t.streams.begin(), t.streams.end(), [](const tcp_sample& x) { return x.pacing_unlimited; });
  if (t.pacing_rate) s += fmt::format(", pacing {}{}", rate(*t.pacing_rate), unpaced ? " (some unlimited)" : "");
  else if (unpaced) s += ", pacing unlimited";
  if (t.delivery_rate) s += fmt::format(", delivery {}", rate(*t.delivery_rate));
  if (t.snd_mss) s += fmt::format(", MSS {}", *t.snd_mss);
  if (t.pmtu) s += fmt::format(", PMTU {}", *t.pmtu);
  return s + "\n";
}

std::string tcp_table(const test_result& r, char units) {
  const rate_units u = units_of(units);
  std::string s = with_heads(r,
                             "Recv   Send    Send\n"
                             "Socket Socket  Message  Elapsed\n"
                             "Size   Size    Size     Time     Throughput\n"
                             "bytes  bytes   bytes    secs.    ",
                             u);
  s += fmt::format("{:<6} {:<7} {:<8} {:<8.2f} {:>10.2f}\n\n", buffer_cell(r.receiver.socket_buffer),
                   buffer_cell(r.sender.socket_buffer), r.message_size, r.sender.seconds,
                   u.of(r.receiver.bits_per_second));
  s += unreported_buffers_line(r);
  s += fmt::format("Messages/s  sender {:.1f}   receiver {:.1f}\n", r.sender.pps, r.receiver.pps);
  if (r.receive) s += fmt::format("Receive     {}\n", receive_words(*r.receive));
  s += target_line(r, units);
  s += omit_line(r);
  s +=
      fmt::format("Bytes       sent {}   received {}{}\n", r.omit ? r.omit->sent_bytes : r.sender.bytes,
                  r.omit ? r.omit->received_bytes : r.receiver.bytes, r.loss.reconciles ? "" : "   DOES NOT RECONCILE");
  if (!r.tcp || !r.tcp->snd_mss) s += fmt::format("MSS         {} (at connect)   path MTU {}\n", r.mss, r.path_mtu);
  s += tcp_info_line(r, units);
  if (!r.receiver_counted_by.empty()) s += engine_line(r);
  return s;
}

// latency_histogram::summary_json, microseconds.
std::string latency_words(const nlohmann::json& l) {
  if (l.value("count", 0) == 0) return "no transaction answered";
  return fmt::format("min {:.1f}  mean {:.1f}  p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}",
                     l.value("min_us", 0.0), l.value("mean_us", 0.0), l.value("p50_us", 0.0), l.value("p90_us", 0.0),
                     l.value("p99_us", 0.0), l.value("p999_us", 0.0), l.value("max_us", 0.0));
}

std::string rr_table(const test_result& r) {
  const rr_figures& rr = *r.rr;
  std::string s = fmt::format("{} TEST to {} port {}: request {} bytes, response {} bytes, {} in flight, {} stream{}\n",
                              to_string(r.kind), r.host, r.port, rr.request_size, rr.response_size, rr.burst + 1,
                              r.streams, r.streams == 1 ? "" : "s");
  s += "Socket   Request  Resp.   Elapsed  Trans.\n"
       "Send     Size     Size    Time     Rate\n"
       "bytes    bytes    bytes   secs.    per sec\n\n";
  s += fmt::format("{:<8} {:<8} {:<7} {:<8.2f} {:.2f}\n\n", r.sender.socket_buffer, rr.request_size, rr.response_size,
                   r.sender.seconds, rr.transactions_per_second);
  s += fmt::format("Latency     µs: {}\n", latency_words(rr.latency.summary_json()));
  s += fmt::format("Requests    sent {}, received {}, lost {}; answers sent {}, received {}, lost {}\n",
                   r.sender.packets, r.receiver.packets, r.loss.packets, rr.responses_sent,
                   rr.transactions + rr.late + rr.unmatched, rr.responses_lost);
  if (rr.timeouts || rr.late || rr.unmatched)
    s += fmt::format("Unanswered  {} transactions given up ({} answered late), {} answers matched none\n", rr.timeouts,
                     rr.late, rr.unmatched);
  if (!r.loss.reconciles) s += fmt::format("Counts      DO NOT RECONCILE: {}\n", r.loss.note);
  s += target_line(r, 0);
  return s;
}

// netperf's: microseconds of busy CPU (all CPUs) per 1024 bytes of payload.
double service_demand_us_per_kb(const host_delta& h, std::uint64_t bytes) {
  const double busy = std::max(0.0, 100.0 - h.all.idle_pct - h.all.steal_pct) / 100.0;
  return busy * h.cpus * h.window_s * 1e6 / (static_cast<double>(bytes) / 1024.0);
}

std::string cpu_lines(const char* label, const char* role, const std::optional<host_delta>& h, std::uint64_t bytes,
                      const char* process) {
  if (!h) return fmt::format("{:<12}{} host not sampled\n", label, role);
  std::string s = fmt::format("{:<12}{} host {:.1f} % of {} CPU{}", label, role, h->all.busy_pct(), h->cpus,
                              h->cpus == 1 ? "" : "s");
  if (const cpu_share* b = h->busiest())
    s += fmt::format(", busiest CPU {} {:.1f} % (softirq {:.1f} %)", b->cpu, b->busy_pct(), b->softirq_pct);
  s += fmt::format("; {} {:.1f} % of a core\n", process, h->process_cpu_pct);
  if (bytes > 0) s += fmt::format("{:<12}service demand {:.3f} us/KB\n", "", service_demand_us_per_kb(*h, bytes));
  return s;
}

std::string host_lines(const test_result& r, bool local_cpu, bool remote_cpu) {
  std::string s;
  const auto& local = r.reverse ? r.hosts.receiver : r.hosts.sender;
  const auto& remote = r.reverse ? r.hosts.sender : r.hosts.receiver;
  const std::uint64_t local_bytes = r.reverse ? r.receiver.bytes : r.sender.bytes;
  const std::uint64_t remote_bytes = r.reverse ? r.sender.bytes : r.receiver.bytes;
  if (local_cpu) s += cpu_lines("CPU local", r.reverse ? "receiver" : "sender", local, local_bytes, "netload");
  if (remote_cpu) s += cpu_lines("CPU remote", r.reverse ? "sender" : "receiver", remote, remote_bytes, "netserve");
  if (r.verdict) s += fmt::format("Limit       {}\n", r.verdict->text);
  return s;
}

}  // namespace

std::string rate_text(double bits_per_second, char units) {
  const rate_units u = units_of(units);
  return fmt::format("{:.2f} {}", u.of(bits_per_second), u.name());
}

std::string format_table(const test_result& r, bool local_cpu, bool remote_cpu, char units) {
  if (r.rr) return rr_table(r) + host_lines(r, local_cpu, remote_cpu);
  return (r.kind == test_kind::udp_stream ? udp_table(r, units) : tcp_table(r, units)) +
         host_lines(r, local_cpu, remote_cpu);
}

std::string format_interval_line(const interval_figures& i, std::int64_t test_start_ns, char units, double omit_s) {
  double secs = ns_to_s(i.end_ns - i.start_ns), from = ns_to_s(i.start_ns - test_start_ns);
  std::string tcp;
  if (i.tcp && i.tcp->retransmits) tcp += fmt::format("  retr {}", *i.tcp->retransmits);
  if (i.tcp && i.tcp->cwnd_bytes) tcp += fmt::format("  cwnd {}B", format_si(static_cast<double>(*i.tcp->cwnd_bytes)));
  if (i.tcp && i.tcp->rtt_us) tcp += fmt::format("  rtt {:.0f} µs", *i.tcp->rtt_us);
  if (i.latency) {
    const nlohmann::json& l = *i.latency;
    return fmt::format(
        "[{:>3}] {:>6.2f}-{:<6.2f} s  {:>10.1f} trans/s  latency µs p50 {:.1f}  p99 {:.1f}  max {:.1f}{}\n", i.index,
        from, from + secs, per_second(l.value("count", std::uint64_t{0}), secs), l.value("p50_us", 0.0),
        l.value("p99_us", 0.0), l.value("max_us", 0.0), i.complete ? "" : "  (one side only)");
  }
  const rate_units u = units_of(units);
  const bool omitted = from + secs <= omit_s + 1e-6;
  return fmt::format(
      "[{:>3}] {:>6.2f}-{:<6.2f} s  sent {:>11.1f} pps {:>9.2f} {}   received {:>11.1f} pps {:>9.2f} {}{}{}{}\n",
      i.index, from, from + secs, per_second(i.sent_packets, secs), u.of(bits_per_second(i.sent_bytes, secs)), u.name(),
      per_second(i.received_packets, secs), u.of(bits_per_second(i.received_bytes, secs)), u.name(), tcp,
      i.complete ? "" : "  (one side only)", omitted ? "  (omitted)" : "");
}

nlohmann::json options_json(const client_options& o) {
  nlohmann::json j = write_described(o);
  j["test"] = to_string(o.kind);
  j["recv_mode"] = std::string(to_string(o.receive));
  j["gso"] = std::string(to_string(o.gso));
  j["target_pps"] = o.target_pps();
  return j;
}

nlohmann::json interval_event(const interval_figures& i) {
  nlohmann::json j = to_json(i);
  j["type"] = "interval";
  return j;
}

}  // namespace nb::load
