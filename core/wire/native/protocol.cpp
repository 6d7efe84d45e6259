#include "core/wire/native/protocol.hpp"

#include "core/json/json_fields.hpp"
#include "core/wire/native/auth.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace nb {
namespace {

using nlohmann::json;
using fields = json_fields<protocol_error>;

json to_json(const test_request& m) {
  json j = write_described(m);
  j["kind"] = to_string(m.kind);
  return j;
}
json to_json(const ready_msg& m) { return write_described(m); }
json to_json(const data_hello& m) {
  json j = {{"cookie", m.cookie}, {"stream", m.stream}};
  if (!m.token.empty()) j["token"] = m.token;  // a keyless netserve sees no new field
  return j;
}
json to_json(const start_msg& m) { return {{"start_wall_ns", m.start_wall_ns}}; }
json to_json(const interval_msg& m) {
  json j = write_described(m);
  if (!m.tcp.empty()) j["tcp"] = to_json(m.tcp);
  return j;
}
json to_json(const side_counts& c) { return write_described(c); }
json to_json(const end_msg& m) { return {{"counts", to_json(m.counts)}}; }
json to_json(const result_msg& m) {
  json j = {{"counts", to_json(m.counts)}, {"unattributed", m.unattributed}};
  if (m.host) j["host"] = to_json(*m.host);
  if (!m.congestion.empty()) j["congestion"] = m.congestion;
  if (!m.tcp.empty()) j["tcp"] = to_json(m.tcp);
  return j;
}
json to_json(const error_msg& m) { return {{"reason", m.reason}}; }
json to_json(const challenge_msg& m) { return {{"nonce", m.nonce}}; }
json to_json(const auth_msg& m) { return {{"nonce", m.nonce}, {"answer", m.answer}}; }
json to_json(const confirm_msg& m) { return {{"answer", m.answer}}; }

test_kind read_kind(fields& f) {
  auto name = f.get<std::string>("kind");
  auto k = parse_test_kind(name);
  if (!k) f.fail("kind", "names an unknown test");
  return *k;
}

test_request read_request(fields& f) {
  test_request m;
  m.kind = read_kind(f);
  f.read_described(m);
  return m;
}

side_counts read_counts(const json& j) { return fields::read_object<side_counts>(j, "counts"); }

std::optional<host_delta> read_host(fields& f, const json& body) {
  if (!body.contains("host")) return std::nullopt;
  try {
    return host_delta_from_json(f.get<json>("host"));
  } catch (const protocol_error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw protocol_error(fmt::format("result: {}", e.what()));
  }
}

std::vector<tcp_sample> read_tcp(fields& f, const json& body) {
  if (!body.contains("tcp")) return {};
  try {
    return tcp_samples_from_json(f.get<json>("tcp"));
  } catch (const protocol_error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw protocol_error(fmt::format("{}: {}", f.context(), e.what()));
  }
}

const json& body_of(fields& f, const json& j) {
  if (!j.contains("body")) f.fail("body", "is missing");
  return j.at("body");
}

message read_body(const std::string& type, const json& body) {
  fields f(body, type);
  message m;
  if (type == "test_request") {
    m = read_request(f);
  } else if (type == "ready") {
    m = f.read_described<ready_msg>();
  } else if (type == "data") {
    m = data_hello{f.get<std::string>("cookie"), f.get<std::uint32_t>("stream"),
                   body.contains("token") ? f.get<std::string>("token") : std::string()};
  } else if (type == "start") {
    m = start_msg{f.get<std::int64_t>("start_wall_ns")};
  } else if (type == "interval") {
    auto i = f.read_described<interval_msg>();
    i.tcp = read_tcp(f, body);
    m = std::move(i);
  } else if (type == "end") {
    f.get<json>("counts");
    m = end_msg{read_counts(body.at("counts"))};
  } else if (type == "result") {
    f.get<json>("counts");
    result_msg r{read_counts(body.at("counts")), f.get<std::uint64_t>("unattributed"), read_host(f, body),
                 f.get_or<std::string>("congestion", ""), read_tcp(f, body)};
    m = std::move(r);
  } else if (type == "error") {
    m = error_msg{f.get<std::string>("reason")};
  } else if (type == "challenge") {
    m = challenge_msg{f.get<std::string>("nonce")};
  } else if (type == "auth") {
    m = auth_msg{f.get<std::string>("nonce"), f.get<std::string>("answer")};
  } else if (type == "confirm") {
    m = confirm_msg{f.get<std::string>("answer")};
  } else {
    throw protocol_error(fmt::format("unknown message type '{}'", type));
  }
  f.done();
  return m;
}

}  // namespace

std::string_view to_string(test_kind k) noexcept {
  switch (k) {
    case test_kind::udp_stream: return "UDP_STREAM";
    case test_kind::tcp_stream: return "TCP_STREAM";
    case test_kind::udp_rr: return "UDP_RR";
    case test_kind::tcp_rr: return "TCP_RR";
  }
  return "?";
}

std::optional<test_kind> parse_test_kind(std::string_view name) noexcept {
  if (name == "UDP_STREAM") return test_kind::udp_stream;
  if (name == "TCP_STREAM") return test_kind::tcp_stream;
  if (name == "UDP_RR") return test_kind::udp_rr;
  if (name == "TCP_RR") return test_kind::tcp_rr;
  return std::nullopt;
}

std::string_view message_type(const message& m) noexcept {
  static constexpr std::string_view names[] = {"test_request", "ready", "data",      "start", "interval", "end",
                                               "result",       "error", "challenge", "auth",  "confirm"};
  return names[m.index()];
}

std::string encode_payload(const message& m) {
  json body = std::visit([](const auto& x) { return to_json(x); }, m);
  return json{{"v", protocol_version}, {"type", message_type(m)}, {"body", std::move(body)}}.dump();
}

message decode_payload(std::string_view payload) {
  bool too_deep = false;
  json j = parse_json_bounded(payload, max_json_depth, &too_deep);
  if (too_deep) throw protocol_error(fmt::format("message nested deeper than {} levels", max_json_depth));
  if (j.is_discarded()) throw protocol_error("message is not valid JSON");
  fields f(j, "message");
  auto v = f.get<std::int64_t>("v");
  if (v != protocol_version)
    throw protocol_error(
        fmt::format("protocol version {} is not supported (this side speaks {})", v, protocol_version));
  auto type = f.get<std::string>("type");
  const json& body = body_of(f, j);
  f.get<json>("body");
  f.done();
  return read_body(type, body);
}

std::string encode_frame(const message& m) {
  std::string payload = encode_payload(m);
  if (payload.size() > max_frame_size) throw protocol_error("message too large for a frame");
  std::uint32_t len = htonl(static_cast<std::uint32_t>(payload.size()));
  std::string frame(frame_header_size, '\0');
  std::memcpy(frame.data(), &len, frame_header_size);
  return frame + payload;
}

std::string encode_frame(const message& m, frame_mac& mac) {
  if (!mac.keyed()) return encode_frame(m);
  std::string payload = encode_payload(m);
  if (payload.size() + frame_mac::tag_size > max_frame_size) throw protocol_error("message too large for a frame");
  std::uint32_t len = htonl(static_cast<std::uint32_t>(payload.size() + frame_mac::tag_size));
  std::string frame(frame_header_size, '\0');
  std::memcpy(frame.data(), &len, frame_header_size);
  std::string tag = mac.seal(payload);
  return frame.append(payload).append(tag);
}

message decode_frame_body(std::string_view body, frame_mac& mac) {
  if (!mac.keyed()) return decode_payload(body);
  if (body.size() <= frame_mac::tag_size) throw protocol_error("a control message without its authentication tag");
  const std::string_view payload = body.substr(0, body.size() - frame_mac::tag_size);
  mac.check(payload, body.substr(payload.size()));
  return decode_payload(payload);
}

std::size_t decode_frame_length(const unsigned char (&header)[frame_header_size]) {
  std::uint32_t len;
  std::memcpy(&len, header, frame_header_size);
  len = ntohl(len);
  if (len == 0) throw protocol_error("empty frame");
  if (len > max_frame_size)
    throw protocol_error(fmt::format("frame of {} bytes exceeds the {}-byte limit", len, max_frame_size));
  return len;
}

void side_counts::add_received(const flow_totals& r) noexcept {
  if (r.first_arrival_ns && (start_wall_ns == 0 || r.first_arrival_ns < start_wall_ns))
    start_wall_ns = r.first_arrival_ns;
  end_wall_ns = std::max(end_wall_ns, r.last_arrival_ns);
  buffers += r.buffers;
  sequenced += r.sequenced;
  out_of_order += r.out_of_order;
  seq_gaps += r.gaps;
  seq_expected += r.next_seq;
  if (r.sequenced > 1) jitter_ns = std::max(jitter_ns, r.jitter_ns);
}

}  // namespace nb
