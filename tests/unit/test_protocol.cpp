#include "core/wire/native/protocol.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace nb;
using nlohmann::json;

namespace {

test_request sample_request() {
  test_request r;
  r.kind = test_kind::udp_stream;
  r.message_size = 1400;
  r.duration_s = 300;
  r.streams = 2;
  r.pps = 1e6;
  r.data_ports = {40000, 40001};
  r.interval_s = 1;
  r.client_version = "0.1.0";
  return r;
}

template <class T>
T round_trip(const T& m) {
  message decoded = decode_payload(encode_payload(message{m}));
  REQUIRE(std::holds_alternative<T>(decoded));
  return std::get<T>(decoded);
}

}  // namespace

TEST_CASE("every message survives encoding and decoding", "[protocol]") {
  auto r = round_trip(sample_request());
  CHECK(r.kind == test_kind::udp_stream);
  CHECK(r.message_size == 1400);
  CHECK(r.data_ports == std::vector<std::uint16_t>{40000, 40001});
  CHECK(r.pps == 1e6);
  test_request tcp = sample_request();
  tcp.kind = test_kind::tcp_stream;
  tcp.recv_size = 65536;
  tcp.congestion = "cubic";
  tcp.zerocopy = true;
  auto t = round_trip(tcp);
  CHECK(t.recv_size == 65536);
  CHECK(t.congestion == "cubic");
  CHECK(t.zerocopy);

  side_counts c;
  c.packets = 0xFFFF'FFFF'FFFFULL;  // beyond 32 bits: netperf's overflow must not happen here
  c.bytes = 1ULL << 62;
  c.jitter_ns = 12.5;
  c.error = "x";
  auto e = round_trip(end_msg{c});
  CHECK(e.counts.packets == c.packets);
  CHECK(e.counts.bytes == c.bytes);
  CHECK(e.counts.jitter_ns == 12.5);
  CHECK(round_trip(result_msg{c, 7, {}}).unattributed == 7);
  CHECK(round_trip(ready_msg{3, "abc", "0.1.0", 100, 200, "gro", "", ""}).cookie == "abc");
  CHECK(round_trip(ready_msg{3, "abc", "0.1.0", 100, 200, "", "datagram", "veth0"}).segmentation_why == "veth0");
  CHECK(round_trip(data_hello{"abc", 4, ""}).stream == 4);
  CHECK(round_trip(data_hello{"abc", 4, "t0k"}).token == "t0k");
  // Without a key the hello is what it always was: no token field.
  CHECK_FALSE(json::parse(encode_payload(message{data_hello{"abc", 4, ""}}))["body"].contains("token"));
  CHECK(round_trip(start_msg{-5}).start_wall_ns == -5);
  CHECK(round_trip(interval_msg{2, 9, 10, 11}).bytes == 11);
  CHECK(round_trip(error_msg{"no"}).reason == "no");
  CHECK(round_trip(challenge_msg{"00ff"}).nonce == "00ff");
  CHECK(round_trip(auth_msg{"00ff", "beef"}).answer == "beef");
  CHECK(round_trip(auth_msg{"00ff", "beef"}).nonce == "00ff");
  CHECK(round_trip(confirm_msg{"cafe"}).answer == "cafe");
}

TEST_CASE("frames carry a big-endian length and a hard cap", "[protocol]") {
  std::string f = encode_frame(message{start_msg{1}});
  unsigned char header[4];
  std::memcpy(header, f.data(), 4);
  CHECK(decode_frame_length(header) == f.size() - 4);

  unsigned char zero[4] = {0, 0, 0, 0};
  CHECK_THROWS_WITH(decode_frame_length(zero), "empty frame");
  unsigned char huge[4] = {0, 1, 0, 1};
  CHECK_THROWS_WITH(decode_frame_length(huge), Catch::Contains("exceeds the 65536-byte limit"));
  unsigned char at_cap[4] = {0, 1, 0, 0};
  CHECK(decode_frame_length(at_cap) == max_frame_size);
}

TEST_CASE("malformed payloads are protocol errors that name the problem", "[protocol]") {
  auto request = json::parse(encode_payload(message{sample_request()}));
  auto fails_with = [](const json& j, const std::string& text) {
    CHECK_THROWS_AS(decode_payload(j.dump()), protocol_error);
    CHECK_THROWS_WITH(decode_payload(j.dump()), Catch::Contains(text));
  };
  CHECK_THROWS_AS(decode_payload("not json"), protocol_error);
  CHECK_THROWS_AS(decode_payload("[1,2]"), protocol_error);
  CHECK_THROWS_AS(decode_payload(""), protocol_error);

  json j = request;
  j["body"]["message_size"] = "1400";
  fails_with(j, "field 'message_size' must be a non-negative integer");
  j = request;
  j["body"]["message_size"] = -1;
  fails_with(j, "field 'message_size' must be a non-negative integer");
  j = request;
  j["body"]["message_size"] = 1ULL << 40;
  fails_with(j, "field 'message_size' is out of range");
  j = request;
  j["body"]["data_ports"] = json::array({70000});
  fails_with(j, "field 'data_ports' is out of range");
  j = request;
  j["body"]["reverse"] = 1;
  fails_with(j, "field 'reverse' must be a boolean");
  j = request;
  j["body"].erase("duration_s");
  fails_with(j, "field 'duration_s' is missing");
  j = request;
  j["body"]["surprise"] = true;
  fails_with(j, "field 'surprise' is not a known field");
  j = request;
  j["body"]["kind"] = "SCTP_STREAM";
  fails_with(j, "field 'kind' names an unknown test");
  j = request;
  j["v"] = 1;
  fails_with(j, "protocol version 1 is not supported (this side speaks 7)");
  // Deep nesting is refused while parsing, before anything recurses into it (6000 levels once
  // overflowed the stack of the field reader).
  const std::string deep = R"({"v":7,"type":"start","body":)" + std::string(6000, '[') + std::string(6000, ']') + "}";
  CHECK_THROWS_WITH(decode_payload(deep), "message nested deeper than 16 levels");
  CHECK_NOTHROW(decode_payload(encode_payload(message{sample_request()})));
  j = request;
  j["type"] = "shutdown";
  fails_with(j, "unknown message type 'shutdown'");
  j = request;
  j.erase("body");
  fails_with(j, "field 'body' is missing");
  j = request;
  j["extra"] = 1;
  fails_with(j, "field 'extra' is not a known field");
  j = request;
  j["body"] = 5;
  fails_with(j, "must be an object");
}

TEST_CASE("the result message carries the server host's delta - optionally and strictly", "[protocol]") {
  result_msg m;
  m.counts.packets = 5;
  CHECK_FALSE(round_trip(m).host);  // a netserve without host figures is still read
  CHECK_FALSE(json::parse(encode_payload(message{m}))["body"].contains("host"));
  host_delta h;
  h.window_s = 2;
  h.cpus = 1;
  h.per_cpu.push_back({0, 10, 20, 30, 0, 40, 0});
  h.interfaces.push_back({"eth0", 1, 2, 3, 4});
  m.host = h;
  auto back = round_trip(m);
  REQUIRE(back.host);
  CHECK(back.host->per_cpu.at(0).softirq_pct == 30);
  CHECK(back.host->interfaces.at(0).tx_dropped == 4);

  json j = json::parse(encode_payload(message{m}));
  j["body"]["host"]["cpu"]["per_cpu"][0]["bogus"] = 1;
  CHECK_THROWS_AS(decode_payload(j.dump()), protocol_error);
  CHECK_THROWS_WITH(decode_payload(j.dump()), Catch::Contains("'bogus' is not a known field"));
  j = json::parse(encode_payload(message{m}));
  j["body"]["host"]["cpu"]["per_cpu"] = json::array();
  for (std::size_t i = 0; i <= max_listed_cpus; ++i)
    j["body"]["host"]["cpu"]["per_cpu"].push_back(to_json(h)["cpu"]["per_cpu"][0]);
  CHECK_THROWS_WITH(decode_payload(j.dump()), Catch::Contains("too many entries"));
}
