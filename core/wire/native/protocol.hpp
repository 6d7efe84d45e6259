#pragma once
// The control protocol between netload and netserve (docs/control-protocol.md).
#include "core/host/host_stats.hpp"
#include "core/json/json_text.hpp"
#include "core/sys/tcp_info.hpp"
#include "core/wire/native/flow.hpp"

#include <fmt/format.h>
#include <boost/describe/class.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nb {

// Changes with any message's fields (docs/control-protocol.md#versions).
inline constexpr int protocol_version = 7;
inline constexpr std::size_t max_frame_size = 64 * 1024;
inline constexpr std::size_t frame_header_size = 4;

struct protocol_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Never cut to 16 bits: outside 1..65535 is a protocol_error naming `what`.
inline std::uint16_t peer_port(std::int64_t port, std::string_view what) {
  if (port < 1 || port > 65535) throw protocol_error(fmt::format("{} {} is outside 1..65535: refused", what, port));
  return static_cast<std::uint16_t>(port);
}

enum class test_kind { udp_stream, tcp_stream, udp_rr, tcp_rr };
std::string_view to_string(test_kind k) noexcept;
std::optional<test_kind> parse_test_kind(std::string_view name) noexcept;
constexpr bool is_rr(test_kind k) noexcept { return k == test_kind::udp_rr || k == test_kind::tcp_rr; }
constexpr bool is_udp(test_kind k) noexcept { return k == test_kind::udp_stream || k == test_kind::udp_rr; }
constexpr bool is_tcp(test_kind k) noexcept { return !is_udp(k); }

struct test_request {
  test_kind kind = test_kind::udp_stream;
  std::uint32_t message_size = 0;
  double duration_s = 0;
  std::uint32_t streams = 1;
  bool reverse = false;
  double pps = 0;                         // all streams; 0 = unlimited
  std::vector<std::uint16_t> data_ports;  // UDP: the client's, per stream
  std::int32_t rcvbuf = 0;                // 0 = leave as is
  std::int32_t sndbuf = 0;
  std::int32_t cpu = -1;
  std::int32_t dscp = -1;
  std::uint32_t mss = 0;
  std::string segmentation = "auto";  // reverse UDP GSO: "on", "off", "auto"
  double interval_s = 0;
  std::uint32_t recv_size = 0;  // bytes per recv(), 0 = default
  std::string congestion;       // empty = the host's default
  bool zerocopy = false;
  bool send_copy = false;  // send(), not sendfile()
  bool recv_copy = false;  // copy received bytes, not discard
  std::string client_version;
  std::uint32_t response_size = 0;  // RR: the answer's bytes
  std::uint32_t burst = 0;          // RR: in flight beyond the first
};
// `kind` travels apart, as its name.
BOOST_DESCRIBE_STRUCT(test_request, (),
                      (message_size, duration_s, streams, reverse, pps, data_ports, rcvbuf, sndbuf, cpu, dscp, mss,
                       segmentation, interval_s, recv_size, congestion, zerocopy, send_copy, recv_copy, client_version,
                       response_size, burst))

struct ready_msg {
  std::uint64_t test_id = 0;
  std::string cookie;
  std::string server_version;
  std::int32_t rcvbuf = 0;  // as granted
  std::int32_t sndbuf = 0;
  std::string batching;
  // Reverse UDP_STREAM only.
  std::string segmentation, segmentation_why;
};
BOOST_DESCRIBE_STRUCT(ready_msg, (),
                      (test_id, cookie, server_version, rcvbuf, sndbuf, batching, segmentation, segmentation_why))

struct data_hello {
  std::string cookie;
  std::uint32_t stream = 0;
  std::string token;  // with a key only: data_token()
};

struct start_msg {
  std::int64_t start_wall_ns = 0;
};

struct side_counts {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t errors = 0;        // sender: refused by the kernel
  std::int64_t start_wall_ns = 0;  // sender: first send; receiver: first arrival
  std::int64_t end_wall_ns = 0;    // receiver: last arrival
  std::int64_t elapsed_ns = 0;     // sender: monotonic
  std::uint64_t kernel_drops = 0;  // receiver: socket drops
  std::uint64_t buffers = 0;       // receiver: fewer than packets with GRO
  bool drops_shared = false;       // another test shared the socket
  std::uint64_t sequenced = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t seq_expected = 0;  // highest sequence + 1
  double jitter_ns = -1;           // RFC 3550; -1 = unknown
  std::string batching;
  std::string error;
  // Receiver: "socket", "xdp-native" or "xdp-generic".
  std::string receive_engine;
  // Beside an XDP engine: what reached the socket.
  std::uint64_t socket_packets = 0;
  std::uint64_t socket_bytes = 0;
  // XDP engine: forward jumps of the sequence (loss bursts, or a reordering).
  std::uint64_t seq_gaps = 0;
  // RR: answers received (client) or sent (server); timeouts: transactions given up unanswered.
  std::uint64_t responses = 0;
  std::uint64_t response_bytes = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t late_responses = 0;
  std::uint64_t unmatched_responses = 0;

  // Not packets or bytes.
  void add_received(const flow_totals& r) noexcept;
};
BOOST_DESCRIBE_STRUCT(side_counts, (),
                      (packets, bytes, errors, start_wall_ns, end_wall_ns, elapsed_ns, kernel_drops, buffers,
                       drops_shared, sequenced, out_of_order, seq_expected, jitter_ns, batching, error, receive_engine,
                       socket_packets, socket_bytes, seq_gaps, responses, response_bytes, timeouts, late_responses,
                       unmatched_responses))

// Cumulative counts at the end of interval `index`.
struct interval_msg {
  std::uint32_t index = 0;
  std::int64_t end_wall_ns = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::vector<tcp_sample> tcp{};  // reverse TCP, by stream
};
// `tcp` travels apart.
BOOST_DESCRIBE_STRUCT(interval_msg, (), (index, end_wall_ns, packets, bytes))

struct end_msg {
  side_counts counts;
};

struct result_msg {
  side_counts counts;
  std::uint64_t unattributed = 0;  // datagrams that matched no test meanwhile
  std::optional<host_delta> host;  // absent from a netserve that sends none
  std::string congestion{};        // reverse TCP; "" unknown
  std::vector<tcp_sample> tcp{};   // reverse TCP, at each stream's end
};

struct error_msg {
  std::string reason;
};

struct challenge_msg {
  std::string nonce;  // hex
};

struct auth_msg {
  std::string nonce;
  std::string answer;
};

struct confirm_msg {
  std::string answer;
};

using message = std::variant<test_request, ready_msg, data_hello, start_msg, interval_msg, end_msg, result_msg,
                             error_msg, challenge_msg, auth_msg, confirm_msg>;

std::string_view message_type(const message& m) noexcept;
std::string encode_payload(const message& m);
// Throws protocol_error naming the field.
message decode_payload(std::string_view payload);
std::string encode_frame(const message& m);

class frame_mac;  // core/wire/native/auth.hpp
// Keyed: header + payload + tag, the length counting both.
std::string encode_frame(const message& m, frame_mac& mac);
// A keyed `mac` checks the tag before the payload is parsed.
message decode_frame_body(std::string_view body, frame_mac& mac);
std::size_t decode_frame_length(const unsigned char (&header)[frame_header_size]);

}  // namespace nb
