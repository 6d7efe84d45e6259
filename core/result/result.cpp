#include "core/result/result.hpp"

#include "core/base/limits.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/json/json_fields.hpp"
#include "core/sys/kernel_features.hpp"

#include <algorithm>
#include <cmath>

namespace nb {
namespace {

using nlohmann::json;
using fields = json_fields<std::runtime_error>;

json hosts_json(const host_figures& h) {
  return {{"sender", h.sender ? to_json(*h.sender) : json(nullptr)},
          {"receiver", h.receiver ? to_json(*h.receiver) : json(nullptr)}};
}

host_figures hosts_from(const json& j) {
  fields f(j, "hosts");
  host_figures h;
  if (auto s = f.get<json>("sender"); !s.is_null()) h.sender = host_delta_from_json(s);
  if (auto r = f.get<json>("receiver"); !r.is_null()) h.receiver = host_delta_from_json(r);
  f.done();
  return h;
}

interval_figures interval_from(const json& j) {
  fields f(j, "interval");
  interval_figures i = f.read_described<interval_figures>();
  if (auto t = f.get_or<json>("tcp", nullptr); !t.is_null()) i.tcp = tcp_figures_from_json(t);
  if (auto l = f.get_or<json>("latency", nullptr); !l.is_null()) {
    if (!l.is_object()) f.fail("latency", "is not an object");
    i.latency = l;
  }
  f.done();
  return i;
}

json rr_json(const rr_figures& rr) {
  json j = write_described(rr);
  j["latency"] = rr.latency.summary_json();
  j["histogram"] = rr.latency.to_json();
  return j;
}

rr_figures rr_from(const json& j) {
  fields f(j, "rr");
  rr_figures rr = f.read_described<rr_figures>();
  f.get<json>("latency");  // rebuilt from the histogram
  try {
    rr.latency = latency_histogram::from_json(f.get<json>("histogram"));
  } catch (const std::invalid_argument& e) {
    f.fail("histogram", e.what());
  }
  if (rr.latency.count() != rr.transactions) f.fail("histogram", "does not hold one round trip per transaction");
  f.done();
  return rr;
}

interruption interruption_from(const json& j) {
  fields f(j, "interrupted");
  interruption i{f.get<std::string>("signal"), f.get<double>("measured_s"), f.get<double>("planned_s")};
  f.done();
  return i;
}

limit_verdict verdict_from(const json& j) {
  fields f(j, "verdict");
  limit_verdict v{f.get<std::string>("limit"), f.get<std::string>("text")};
  if (std::find(std::begin(verdict_limits), std::end(verdict_limits), v.limit) == std::end(verdict_limits))
    f.fail("limit", "names no known limit");
  f.done();
  return v;
}

void reconcile_tcp(test_result& r) {
  loss_figures& l = r.loss;
  for (flow_figures* f : {&r.sender, &r.receiver}) {
    f->packets = tcp_messages(f->bytes, r.message_size);
    f->pps = per_second(f->packets, f->seconds);
  }
  const std::uint64_t sent = r.sender.bytes, got = r.receiver.bytes;
  l.kernel_drop_buffers = l.receiver_kernel_drops = 0;  // TCP retransmits what a socket drops
  l.drops_estimated = false;
  if (got > sent) {
    l.packets = l.path = 0;
    l.reconciles = false;
    l.note = fmt::format("receiver counted {} more bytes than were sent", got - sent);
    return;
  }
  l.packets = l.path = r.sender.packets - r.receiver.packets;
  l.percent = sent ? 100.0 * static_cast<double>(sent - got) / static_cast<double>(sent) : 0.0;
  l.reconciles = got == sent;
  if (!l.reconciles) l.note = fmt::format("TCP delivered {} of {} bytes", got, sent);
}

}  // namespace

target_figures check_target(double requested_pps, std::uint32_t message_size, const flow_figures& sender, bool ceiling,
                            std::uint32_t streams, const omit_figures* left_out) {
  target_figures t;
  t.ceiling = ceiling;
  t.requested_pps = requested_pps;
  t.achieved_pps = sender.pps;
  t.requested_bits_per_second = requested_pps * static_cast<double>(message_size) * 8.0;
  t.achieved_bits_per_second = sender.bits_per_second;
  if (t.requested_bits_per_second > 0)
    t.error_percent = 100.0 * (t.achieved_bits_per_second - t.requested_bits_per_second) / t.requested_bits_per_second;
  if (!ceiling) {
    t.met = std::fabs(t.error_percent) <= target_tolerance_percent;
    return t;
  }
  const double rate = t.requested_bits_per_second / 8.0;
  const auto window = static_cast<double>(sender.bytes);
  if (!left_out) {
    t.met = window <= ceiling_bytes(rate, sender.seconds, streams, message_size);
    return t;
  }
  // A window after left-out seconds TCP held under the ceiling makes up for them, no faster than the pacer's
  // catch-up and a burst (its bucket: at most 10 ms of the rate or a message a stream).
  const double catching_up = ceiling_bytes(rate * pacing_catch_up, sender.seconds, streams, message_size) +
                             rate * pacing_max_burst_s + static_cast<double>(streams) * message_size;
  t.met = static_cast<double>(left_out->sent_bytes) <=
              ceiling_bytes(rate, sender.seconds + left_out->seconds, streams, message_size) &&
          window <= catching_up;
  return t;
}

double ceiling_bytes(double bytes_per_second, double seconds, std::uint32_t streams, std::uint32_t message_size) {
  // A pacer begins a whole message once due: at a slow rate one message is a large share of a short run.
  return bytes_per_second * seconds * (1 + target_tolerance_percent / 100) +
         static_cast<double>(streams) * message_size;
}

void compute_rates(flow_figures& f) {
  f.pps = per_second(f.packets, f.seconds);
  f.bits_per_second = bits_per_second(f.bytes, f.seconds);
}

flow_figures sender_figures(const side_counts& c, double seconds, std::int64_t first_ns, std::int32_t socket_buffer,
                            std::string batching) {
  flow_figures f{.packets = c.packets,
                 .bytes = c.bytes,
                 .errors = c.errors,
                 .seconds = seconds,
                 .first_ns = first_ns,
                 .socket_buffer = socket_buffer,
                 .batching = std::move(batching)};
  compute_rates(f);
  return f;
}

flow_figures receiver_figures(const side_counts& c, double seconds, std::int32_t socket_buffer, std::string batching) {
  flow_figures f{.packets = c.packets,
                 .bytes = c.bytes,
                 .seconds = seconds,
                 .first_ns = c.start_wall_ns,
                 .last_ns = c.end_wall_ns,
                 .socket_buffer = socket_buffer,
                 .batching = std::move(batching)};
  compute_rates(f);
  return f;
}

std::string_view stock_receiver(std::string_view batching) noexcept {
  if (!drops_unknown(batching)) return {};
  for (const std::string_view name : {"netserver", "iperf3"})
    if (batching.starts_with(name) && batching.substr(name.size()).starts_with(",")) return name;
  return {};
}

void reconcile(test_result& r, std::uint64_t drop_buffers, std::uint64_t buffers) {
  if (r.kind == test_kind::tcp_stream) {
    reconcile_tcp(r);
    return;
  }
  loss_figures& l = r.loss;
  const std::uint64_t sent = r.sender.packets, got = r.receiver.packets;
  l.kernel_drop_buffers = drop_buffers;
  l.receiver_kernel_drops = drop_buffers;
  if (buffers > 0 && got > buffers) {
    l.drops_estimated = drop_buffers > 0;
    l.receiver_kernel_drops = static_cast<std::uint64_t>(
        std::llround(static_cast<double>(drop_buffers) * static_cast<double>(got) / static_cast<double>(buffers)));
  }
  if (got > sent) {
    l.packets = l.path = l.receiver_kernel_drops = 0;
    l.reconciles = false;
    l.note =
        fmt::format("receiver counted {} more datagrams than were sent (duplicates or a foreign sender)", got - sent);
    return;
  }
  l.packets = sent - got;
  l.percent = sent ? 100.0 * static_cast<double>(l.packets) / static_cast<double>(sent) : 0.0;
  // The drop counter may include another test's datagrams on a shared socket.
  l.receiver_kernel_drops = std::min(l.receiver_kernel_drops, l.packets);
  l.path = l.packets - l.receiver_kernel_drops;
  l.reconciles = got + l.packets == sent && l.path + l.receiver_kernel_drops == l.packets;
  if (l.drops_estimated)
    l.note = fmt::format(
        "receiver kernel drops estimated: the kernel counted {} dropped GRO buffers of about {:.1f} datagrams",
        drop_buffers, static_cast<double>(got) / static_cast<double>(buffers));
  if (drops_unknown(r.receiver.batching))  // its 0 drops are no count
    l.note = fmt::format(
        "receiver kernel drops unknown: the receiver ({}) reports no count of its socket's drops (a "
        "stock server, or a kernel without SO_MEMINFO, Linux before 4.12), so the loss is not split "
        "between the socket and the path (receiver_kernel_drops 0 and path = loss stand for 'unknown'; "
        "the verdict uses the host's UDP RcvbufErrors)",
        r.receiver.batching);
}

void reconcile_rr(test_result& r, const side_counts& client, const side_counts& server) {
  rr_figures& rr = *r.rr;
  rr.transactions = client.responses;
  rr.responses_sent = server.responses;
  rr.timeouts = client.timeouts;
  rr.late = client.late_responses;
  rr.unmatched = client.unmatched_responses;
  loss_figures& l = r.loss;
  const std::uint64_t arrived = client.responses + client.late_responses + client.unmatched_responses;
  if (arrived > server.responses) {
    l.reconciles = false;
    l.note = fmt::format("the client received {} more answers than the server sent", arrived - server.responses);
    return;
  }
  rr.responses_lost = server.responses - arrived;
  // Unnumbered answers match in order: a late one closes the next transaction, whose answer matches none.
  const bool numbered = rr.request_size >= 8 && rr.response_size >= 8;
  const std::uint64_t late = client.late_responses + (numbered ? 0 : client.unmatched_responses);
  // Given up = lost both ways + late + refused by the server's kernel (its errors).
  std::string why;
  if (client.responses + client.timeouts != client.packets)
    why = fmt::format("{} requests sent, but {} answered and {} given up", client.packets, client.responses,
                      client.timeouts);
  else if (client.timeouts != l.packets + rr.responses_lost + late + server.errors)
    why = fmt::format(
        "{} transactions given up, but {} requests and {} answers lost, {} late and {} the server's "
        "kernel refused",
        client.timeouts, l.packets, rr.responses_lost, late, server.errors);
  if (!why.empty()) {
    l.reconciles = false;
    l.note = why;
  }
}

json to_json(const interval_figures& i) {
  json j = write_described(i);
  if (i.tcp) j["tcp"] = to_json(*i.tcp);
  if (i.latency) j["latency"] = *i.latency;
  return j;
}

interval_figures interval_from_json(const json& j) { return interval_from(j); }

void escape_peer_text(test_result& r) {
  for (std::string* name :
       {&r.server_version, &r.receiver_counted_by, &r.sender.batching, &r.receiver.batching, &r.receive_engine})
    *name = printable_bounded(*name);
  for (std::string* text : {&r.error, &r.loss.note}) *text = printable_bounded(*text, 1024);
  if (r.verdict) r.verdict->text = printable_bounded(r.verdict->text, 1024);
  if (r.receiver_note) *r.receiver_note = printable_bounded(*r.receiver_note, 1024);
  if (r.tcp && r.tcp->congestion) *r.tcp->congestion = printable_bounded(*r.tcp->congestion);
  for (interval_figures& i : r.intervals)
    if (i.tcp && i.tcp->congestion) *i.tcp->congestion = printable_bounded(*i.tcp->congestion);
  for (std::optional<mode_choice>* m : {&r.receive, &r.segmentation}) {
    if (!*m) continue;
    (*m)->mode = printable_bounded((*m)->mode);
    (*m)->why = printable_bounded((*m)->why, 1024);
  }
}

json to_json(const test_result& r) {
  json j = write_described(r);
  j["schema"] = result_schema;
  j["test"] = to_string(r.kind);
  j["sender"] = write_described(r.sender);
  j["receiver"] = write_described(r.receiver);
  j["loss"] = write_described(r.loss);
  j["jitter_ms"] = r.jitter_ms ? json(*r.jitter_ms) : json(nullptr);
  j["out_of_order"] = r.out_of_order ? json(*r.out_of_order) : json(nullptr);
  j["intervals"] = json::array();
  for (const auto& i : r.intervals) j["intervals"].push_back(to_json(i));
  j["receive_engine"] = r.receive_engine;
  j["receiver_counted_by"] = r.receiver_counted_by;
  j["seq_gaps"] = r.seq_gaps ? json(*r.seq_gaps) : json(nullptr);
  j["socket_received"] = r.socket_received
                             ? json{{"packets", r.socket_received->first}, {"bytes", r.socket_received->second}}
                             : json(nullptr);
  if (r.tcp) j["tcp"] = to_json(*r.tcp);
  else if (r.kind == test_kind::tcp_stream) j["tcp"] = nullptr;
  if (r.target) j["target"] = write_described(*r.target);
  if (r.omit) j["omit"] = write_described(*r.omit);
  if (r.rr) j["rr"] = rr_json(*r.rr);
  j["hosts"] = hosts_json(r.hosts);
  j["verdict"] = r.verdict ? json{{"limit", r.verdict->limit}, {"text", r.verdict->text}} : json(nullptr);
  j["receiver_note"] = r.receiver_note ? json(*r.receiver_note) : json(nullptr);
  j["receive"] = r.receive ? write_described(*r.receive) : json(nullptr);
  j["segmentation"] = r.segmentation ? write_described(*r.segmentation) : json(nullptr);
  j["interrupted"] = r.interrupted ? json{{"signal", r.interrupted->signal},
                                          {"measured_s", r.interrupted->measured_s},
                                          {"planned_s", r.interrupted->planned_s}}
                                   : json(nullptr);
  return j;
}

test_result result_from_json(const json& j) {
  fields f(j, "result");
  if (f.get<std::string>("schema") != result_schema)
    f.fail("schema",
           "is not "
           "netload.result/1");
  test_result r = f.read_described<test_result>();
  auto kind = parse_test_kind(f.get<std::string>("test"));
  if (!kind) f.fail("test", "names an unknown test");
  r.kind = *kind;
  r.sender = fields::read_object<flow_figures>(f.get<json>("sender"), "sender");
  r.receiver = fields::read_object<flow_figures>(f.get<json>("receiver"), "receiver");
  r.loss = fields::read_object<loss_figures>(f.get<json>("loss"), "loss");
  if (auto v = f.get<json>("jitter_ms"); !v.is_null()) r.jitter_ms = f.get<double>("jitter_ms");
  if (auto v = f.get<json>("out_of_order"); !v.is_null()) r.out_of_order = f.get<std::uint64_t>("out_of_order");
  for (const auto& i : f.get<json>("intervals")) r.intervals.push_back(interval_from(i));
  // Older results may lack the fields read with get_or.
  r.receive_engine = f.get_or<std::string>("receive_engine", "");
  r.receiver_counted_by = f.get_or<std::string>("receiver_counted_by", "");
  if (auto g = f.get_or<json>("seq_gaps", nullptr); !g.is_null()) r.seq_gaps = f.get<std::uint64_t>("seq_gaps");
  if (auto s = f.get_or<json>("socket_received", nullptr); !s.is_null()) {
    fields sr(s, "socket_received");
    r.socket_received.emplace(sr.get<std::uint64_t>("packets"), sr.get<std::uint64_t>("bytes"));
    sr.done();
  }
  if (auto t = f.get_or<json>("tcp", nullptr); !t.is_null()) r.tcp = tcp_figures_from_json(t);
  if (j.contains("target")) {
    json t = f.get<json>("target");
    // Before TCP rates were ceilings every rate was a target.
    if (t.is_object() && !t.contains("ceiling")) t["ceiling"] = false;
    r.target = fields::read_object<target_figures>(t, "target");
  }
  if (j.contains("omit")) r.omit = fields::read_object<omit_figures>(f.get<json>("omit"), "omit");
  if (is_rr(r.kind)) r.rr = rr_from(f.get<json>("rr"));
  if (auto h = f.get_or<json>("hosts", nullptr); !h.is_null()) r.hosts = hosts_from(h);
  if (auto v = f.get_or<json>("verdict", nullptr); !v.is_null()) r.verdict = verdict_from(v);
  if (auto i = f.get_or<json>("interrupted", nullptr); !i.is_null()) r.interrupted = interruption_from(i);
  if (auto n = f.get_or<json>("receiver_note", nullptr); !n.is_null())
    r.receiver_note = f.get<std::string>("receiver_note");
  if (auto m = f.get_or<json>("receive", nullptr); !m.is_null())
    r.receive = fields::read_object<receive_figures>(m, "receive");
  if (auto m = f.get_or<json>("segmentation", nullptr); !m.is_null())
    r.segmentation = fields::read_object<segmentation_figures>(m, "segmentation");
  f.done();
  return r;
}

}  // namespace nb
