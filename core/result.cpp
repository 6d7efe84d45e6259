#include "core/result.hpp"

#include "core/json_fields.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cmath>

namespace nb {
namespace {

using nlohmann::json;
using fields = json_fields<std::runtime_error>;

json flow_json(const flow_figures& f) {
  return {{"packets", f.packets}, {"bytes", f.bytes}, {"errors", f.errors}, {"seconds", f.seconds},
          {"pps", f.pps}, {"bits_per_second", f.bits_per_second}, {"first_ns", f.first_ns},
          {"last_ns", f.last_ns}, {"socket_buffer", f.socket_buffer}, {"batching", f.batching}};
}

flow_figures flow_from(const json& j, const char* name) {
  fields f(j, name);
  flow_figures x;
  x.packets = f.get<std::uint64_t>("packets");
  x.bytes = f.get<std::uint64_t>("bytes");
  x.errors = f.get<std::uint64_t>("errors");
  x.seconds = f.get<double>("seconds");
  x.pps = f.get<double>("pps");
  x.bits_per_second = f.get<double>("bits_per_second");
  x.first_ns = f.get<std::int64_t>("first_ns");
  x.last_ns = f.get<std::int64_t>("last_ns");
  x.socket_buffer = f.get<std::int32_t>("socket_buffer");
  x.batching = f.get<std::string>("batching");
  f.done();
  return x;
}

json loss_json(const loss_figures& l) {
  return {{"packets", l.packets}, {"percent", l.percent}, {"receiver_kernel_drops", l.receiver_kernel_drops},
          {"kernel_drop_buffers", l.kernel_drop_buffers}, {"drops_estimated", l.drops_estimated},
          {"path", l.path}, {"drops_shared", l.drops_shared}, {"reconciles", l.reconciles}, {"note", l.note}};
}

loss_figures loss_from(const json& j) {
  fields f(j, "loss");
  loss_figures l;
  l.packets = f.get<std::uint64_t>("packets");
  l.percent = f.get<double>("percent");
  l.receiver_kernel_drops = f.get<std::uint64_t>("receiver_kernel_drops");
  l.kernel_drop_buffers = f.get<std::uint64_t>("kernel_drop_buffers");
  l.drops_estimated = f.get<bool>("drops_estimated");
  l.path = f.get<std::uint64_t>("path");
  l.drops_shared = f.get<bool>("drops_shared");
  l.reconciles = f.get<bool>("reconciles");
  l.note = f.get<std::string>("note");
  f.done();
  return l;
}

interval_figures interval_from(const json& j) {
  fields f(j, "interval");
  interval_figures i;
  i.index = f.get<std::uint32_t>("index");
  i.start_ns = f.get<std::int64_t>("start_ns");
  i.end_ns = f.get<std::int64_t>("end_ns");
  i.sent_packets = f.get<std::uint64_t>("sent_packets");
  i.sent_bytes = f.get<std::uint64_t>("sent_bytes");
  i.received_packets = f.get<std::uint64_t>("received_packets");
  i.received_bytes = f.get<std::uint64_t>("received_bytes");
  i.complete = f.get<bool>("complete");
  f.done();
  return i;
}

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

limit_verdict verdict_from(const json& j) {
  fields f(j, "verdict");
  limit_verdict v{f.get<std::string>("limit"), f.get<std::string>("text")};
  if (std::find(std::begin(verdict_limits), std::end(verdict_limits), v.limit) == std::end(verdict_limits))
    f.fail("limit", "names no known limit");
  f.done();
  return v;
}

json target_json(const target_figures& t) {
  return {{"requested_pps", t.requested_pps}, {"achieved_pps", t.achieved_pps},
          {"requested_bits_per_second", t.requested_bits_per_second},
          {"achieved_bits_per_second", t.achieved_bits_per_second}, {"error_percent", t.error_percent}, {"met", t.met}};
}

target_figures target_from(const json& j) {
  fields f(j, "target");
  target_figures t;
  t.requested_pps = f.get<double>("requested_pps");
  t.achieved_pps = f.get<double>("achieved_pps");
  t.requested_bits_per_second = f.get<double>("requested_bits_per_second");
  t.achieved_bits_per_second = f.get<double>("achieved_bits_per_second");
  t.error_percent = f.get<double>("error_percent");
  t.met = f.get<bool>("met");
  f.done();
  return t;
}

// TCP: the bytes are the count. Both sides' messages come from them (tcp_messages), so they agree
// whenever the bytes agree, and the loss is the bytes that did not arrive, as messages and percent.
void reconcile_tcp(test_result& r) {
  loss_figures& l = r.loss;
  for (flow_figures* f : {&r.sender, &r.receiver}) {
    f->packets = tcp_messages(f->bytes, r.message_size);
    f->pps = per_second(f->packets, f->seconds);
  }
  const std::uint64_t sent = r.sender.bytes, got = r.receiver.bytes;
  l.kernel_drop_buffers = l.receiver_kernel_drops = 0;  // TCP retransmits: a socket drop is not a loss
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

target_figures check_target(double requested_pps, std::uint32_t message_size, const flow_figures& sender) {
  target_figures t;
  t.requested_pps = requested_pps;
  t.achieved_pps = sender.pps;
  t.requested_bits_per_second = requested_pps * static_cast<double>(message_size) * 8.0;
  t.achieved_bits_per_second = sender.bits_per_second;
  if (t.requested_bits_per_second > 0)
    t.error_percent = 100.0 * (t.achieved_bits_per_second - t.requested_bits_per_second) / t.requested_bits_per_second;
  t.met = std::fabs(t.error_percent) <= target_tolerance_percent;
  return t;
}

void compute_rates(flow_figures& f) {
  f.pps = per_second(f.packets, f.seconds);
  f.bits_per_second = bits_per_second(f.bytes, f.seconds);
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
    l.note = fmt::format("receiver counted {} more datagrams than were sent (duplicates or a foreign sender)",
                         got - sent);
    return;
  }
  l.packets = sent - got;
  l.percent = sent ? 100.0 * static_cast<double>(l.packets) / static_cast<double>(sent) : 0.0;
  // The socket's drop counter can include datagrams of another test that shared it; never blame more
  // drops on this test than it lost.
  l.receiver_kernel_drops = std::min(l.receiver_kernel_drops, l.packets);
  l.path = l.packets - l.receiver_kernel_drops;
  l.reconciles = got + l.packets == sent && l.path + l.receiver_kernel_drops == l.packets;
  if (l.drops_estimated)
    l.note = fmt::format("receiver kernel drops estimated: the kernel counted {} dropped GRO buffers of about {:.1f} datagrams",
                         drop_buffers, static_cast<double>(got) / static_cast<double>(buffers));
}

json to_json(const interval_figures& i) {
  return {{"index", i.index}, {"start_ns", i.start_ns}, {"end_ns", i.end_ns},
          {"sent_packets", i.sent_packets}, {"sent_bytes", i.sent_bytes},
          {"received_packets", i.received_packets}, {"received_bytes", i.received_bytes},
          {"complete", i.complete}};
}

json to_json(const test_result& r) {
  json j = {{"schema", result_schema}, {"ok", r.ok}, {"error", r.error}, {"test", to_string(r.kind)},
            {"host", r.host}, {"port", r.port}, {"message_size", r.message_size}, {"streams", r.streams},
            {"reverse", r.reverse}, {"options", r.options}, {"client_version", r.client_version},
            {"server_version", r.server_version}, {"requested_start", r.requested_start},
            {"actual_start", r.actual_start}, {"path_mtu", r.path_mtu}, {"mss", r.mss}};
  j["sender"] = flow_json(r.sender);
  j["receiver"] = flow_json(r.receiver);
  j["loss"] = loss_json(r.loss);
  j["jitter_ms"] = r.jitter_ms ? json(*r.jitter_ms) : json(nullptr);
  j["out_of_order"] = r.out_of_order ? json(*r.out_of_order) : json(nullptr);
  j["intervals"] = json::array();
  for (const auto& i : r.intervals) j["intervals"].push_back(to_json(i));
  if (r.target) j["target"] = target_json(*r.target);  // paced tests only
  j["hosts"] = hosts_json(r.hosts);
  j["verdict"] = r.verdict ? json{{"limit", r.verdict->limit}, {"text", r.verdict->text}} : json(nullptr);
  return j;
}

test_result result_from_json(const json& j) {
  fields f(j, "result");
  if (f.get<std::string>("schema") != result_schema) f.fail("schema", "is not " "netload.result/1");
  test_result r;
  r.ok = f.get<bool>("ok");
  r.error = f.get<std::string>("error");
  auto kind = parse_test_kind(f.get<std::string>("test"));
  if (!kind) f.fail("test", "names an unknown test");
  r.kind = *kind;
  r.host = f.get<std::string>("host");
  r.port = f.get<std::uint16_t>("port");
  r.message_size = f.get<std::uint32_t>("message_size");
  r.streams = f.get<std::uint32_t>("streams");
  r.reverse = f.get<bool>("reverse");
  r.options = f.get<json>("options");
  r.client_version = f.get<std::string>("client_version");
  r.server_version = f.get<std::string>("server_version");
  r.requested_start = f.get<double>("requested_start");
  r.actual_start = f.get<double>("actual_start");
  r.path_mtu = f.get<int>("path_mtu");
  r.mss = f.get<int>("mss");
  r.sender = flow_from(f.get<json>("sender"), "sender");
  r.receiver = flow_from(f.get<json>("receiver"), "receiver");
  r.loss = loss_from(f.get<json>("loss"));
  if (auto v = f.get<json>("jitter_ms"); !v.is_null()) r.jitter_ms = f.get<double>("jitter_ms");
  if (auto v = f.get<json>("out_of_order"); !v.is_null()) r.out_of_order = f.get<std::uint64_t>("out_of_order");
  for (const auto& i : f.get<json>("intervals")) r.intervals.push_back(interval_from(i));
  // Only paced tests have a target (and results written before it existed have none); when present it
  // must be a whole target object, null included.
  if (j.contains("target")) r.target = target_from(f.get<json>("target"));
  // Results written before hosts and verdict existed have neither.
  if (auto h = f.get_or<json>("hosts", nullptr); !h.is_null()) r.hosts = hosts_from(h);
  if (auto v = f.get_or<json>("verdict", nullptr); !v.is_null()) r.verdict = verdict_from(v);
  f.done();
  return r;
}

}  // namespace nb
