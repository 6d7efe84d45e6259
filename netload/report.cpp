#include "netload/report.hpp"

#include "core/clock.hpp"
#include "core/units.hpp"

#include <fmt/format.h>

namespace nb::load {
namespace {

std::string header(const test_result& r) {
  return fmt::format("{} TEST to {} port {}: message {} bytes, {} stream{}{}, batching {}/{}\n", to_string(r.kind),
                     r.host, r.port, r.message_size, r.streams, r.streams == 1 ? "" : "s", r.reverse ? ", reverse" : "",
                     r.sender.batching, r.receiver.batching);
}

std::string loss_line(const test_result& r) {
  const loss_figures& l = r.loss;
  if (!l.note.empty() && !l.reconciles) return fmt::format("Loss        does not reconcile: {}\n", l.note);
  std::string s = fmt::format("Loss        {} of {} ({:.2f} %)", l.packets, r.sender.packets, l.percent);
  if (l.packets)
    s += fmt::format(": {}{} dropped by the receiver's kernel (socket buffer full{}), {} lost on the path",
                     l.drops_estimated ? "about " : "", l.receiver_kernel_drops,
                     l.drops_shared ? ", socket shared with another test" : "", l.path);
  if (l.drops_estimated) s += fmt::format("\n            (the kernel counts dropped GRO buffers: {})", l.kernel_drop_buffers);
  return s + "\n";
}

std::string udp_table(const test_result& r) {
  std::string s = header(r);
  s += "Socket  Message  Elapsed      Messages\n"
       "Size    Size     Time         Okay Errors   Throughput\n"
       "bytes   bytes    secs            #      #   10^6bits/sec\n\n";
  s += fmt::format("{:<7} {:>7}  {:>7.2f}  {:>10} {:>6}   {:>10.2f}\n", r.sender.socket_buffer, r.message_size, r.sender.seconds,
                   r.sender.packets, r.sender.errors, r.sender.bits_per_second / 1e6);
  s += fmt::format("{:<7} {:>7}  {:>7.2f}  {:>10} {:>6}   {:>10.2f}\n\n", r.receiver.socket_buffer, "", r.receiver.seconds,
                   r.receiver.packets, "", r.receiver.bits_per_second / 1e6);
  s += fmt::format("Packets/s   sender {:.1f}   receiver {:.1f}\n", r.sender.pps, r.receiver.pps);
  s += loss_line(r);
  if (r.jitter_ms || r.out_of_order)
    s += fmt::format("Jitter      {:.4f} ms   out of order {}\n", r.jitter_ms.value_or(0), r.out_of_order.value_or(0));
  s += fmt::format("Path MTU    {}\n", r.path_mtu);
  return s;
}

std::string tcp_table(const test_result& r) {
  std::string s = header(r);
  s += "Recv   Send    Send\n"
       "Socket Socket  Message  Elapsed\n"
       "Size   Size    Size     Time     Throughput\n"
       "bytes  bytes   bytes    secs.    10^6bits/sec\n\n";
  s += fmt::format("{:<6} {:<7} {:<8} {:<8.2f} {:>10.2f}\n\n", r.receiver.socket_buffer, r.sender.socket_buffer, r.message_size,
                   r.sender.seconds, r.receiver.bits_per_second / 1e6);
  s += fmt::format("Messages/s  sender {:.1f}   receiver {:.1f}\n", r.sender.pps, r.receiver.pps);
  s += fmt::format("Bytes       sent {}   received {}{}\n", r.sender.bytes, r.receiver.bytes,
                   r.loss.reconciles ? "" : "   DOES NOT RECONCILE");
  s += fmt::format("MSS         {}   path MTU {}\n", r.mss, r.path_mtu);
  return s;
}

}  // namespace

std::string format_table(const test_result& r) { return r.kind == test_kind::udp_stream ? udp_table(r) : tcp_table(r); }

std::string format_interval_line(const interval_figures& i, std::int64_t test_start_ns) {
  double secs = ns_to_s(i.end_ns - i.start_ns), from = ns_to_s(i.start_ns - test_start_ns);
  return fmt::format("[{:>3}] {:>6.2f}-{:<6.2f} s  sent {:>11.1f} pps {:>9.2f} Mbit/s   received {:>11.1f} pps {:>9.2f} Mbit/s{}\n",
                     i.index, from, from + secs, per_second(i.sent_packets, secs), bits_per_second(i.sent_bytes, secs) / 1e6,
                     per_second(i.received_packets, secs), bits_per_second(i.received_bytes, secs) / 1e6,
                     i.complete ? "" : "  (one side only)");
}

nlohmann::json options_json(const client_options& o) {
  return {{"host", o.host},           {"port", o.port},           {"local_address", o.local_address},           {"test", to_string(o.kind)},
          {"duration_s", o.duration_s}, {"message_size", o.message_size}, {"local_buffer", o.local_buffer},
          {"remote_buffer", o.remote_buffer}, {"local_cpu", o.local_cpu}, {"remote_cpu", o.remote_cpu},
          {"mss", o.mss},             {"rate_bps", o.rate_bps},   {"pps", o.pps},
          {"target_pps", o.target_pps()}, {"interval_s", o.interval_s}, {"streams", o.streams},
          {"reverse", o.reverse},     {"dscp", o.dscp},           {"gso", o.gso},
          {"gro", o.gro},             {"batch", o.batch},         {"start_at", o.start_at ? nlohmann::json(*o.start_at) : nlohmann::json(nullptr)},
          {"argv", o.argv}};
}

nlohmann::json interval_event(const interval_figures& i) {
  nlohmann::json j = to_json(i);
  j["type"] = "interval";
  return j;
}

}  // namespace nb::load
