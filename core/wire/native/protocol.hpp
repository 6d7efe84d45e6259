#pragma once
// The control protocol between netload and netserve.
// A frame is a 4-byte big-endian length and that many bytes of JSON, at most max_frame_size; the JSON is
// one object with "v" (protocol version) and "type". Every field is type-checked on decode and unknown
// fields are rejected: a malformed message is a protocol_error, never a crash or a guess.
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

// 2: the hosts' figures in the result (0.2.0); 3: the mutual key check, MACs on frames, data tokens (0.3.0);
// 4: TCP receive size, congestion control and zero-copy in the request, TCP_INFO samples of the
// server's sending streams in intervals and result (0.4.0); 5: the receive engine in the counts, and what the
// socket path counted beside an XDP engine (0.5.0); 6: request/response tests, UDP_RR and TCP_RR (0.6.0);
// 7: TCP senders use sendfile() unless the request says send_copy, receivers discard in the kernel unless
// it says recv_copy (0.7.0)
inline constexpr int protocol_version = 7;
inline constexpr std::size_t max_frame_size = 64 * 1024;
inline constexpr std::size_t frame_header_size = 4;

struct protocol_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A port a peer names (netserver's data port, ...): 1..65535, never cut to 16 bits; else protocol_error
// naming it and `what` ("netserver's data port").
inline std::uint16_t peer_port(std::int64_t port, std::string_view what) {
  if (port < 1 || port > 65535) throw protocol_error(fmt::format("{} {} is outside 1..65535: refused", what, port));
  return static_cast<std::uint16_t>(port);
}

enum class test_kind { udp_stream, tcp_stream, udp_rr, tcp_rr };
std::string_view to_string(test_kind k) noexcept;
// "UDP_STREAM", "TCP_STREAM", "UDP_RR", "TCP_RR"
std::optional<test_kind> parse_test_kind(std::string_view name) noexcept;
constexpr bool is_rr(test_kind k) noexcept { return k == test_kind::udp_rr || k == test_kind::tcp_rr; }
constexpr bool is_udp(test_kind k) noexcept { return k == test_kind::udp_stream || k == test_kind::udp_rr; }
constexpr bool is_tcp(test_kind k) noexcept { return !is_udp(k); }

// netload -> netserve, first frame of a control connection.
struct test_request {
  test_kind kind = test_kind::udp_stream;
  std::uint32_t message_size = 0;
  double duration_s = 0;
  std::uint32_t streams = 1;
  bool reverse = false;
  double pps = 0;                         // all streams together; 0 = unlimited (reverse: the server paces)
  std::vector<std::uint16_t> data_ports;  // UDP: the client's port per stream, on the control peer address
  std::int32_t rcvbuf = 0;                // requested on the server's data socket, 0 = leave as is
  std::int32_t sndbuf = 0;
  std::int32_t cpu = -1;              // pin the server's data thread(s)
  std::int32_t dscp = -1;             // reverse: marks the server's datagrams
  std::uint32_t mss = 0;              // reverse TCP: the server's MSS
  std::string segmentation = "auto";  // reverse UDP: GSO "on", "off", or "auto" for the server's route to us
  double interval_s = 0;              // > 0: send interval reports
  std::uint32_t recv_size = 0;        // forward TCP: the server's bytes per recv(), 0 = its default
  std::string congestion;             // TCP: the congestion-control algorithm, empty = the host's default
  bool zerocopy = false;              // reverse TCP: the server sends with MSG_ZEROCOPY
  bool send_copy = false;             // reverse TCP: the server sends with send(), not sendfile()
  bool recv_copy = false;             // forward TCP: the server copies what it receives, not discards it
  std::string client_version;
  std::uint32_t response_size = 0;  // request/response: the answer's bytes (message_size: the request's)
  std::uint32_t burst = 0;          // request/response: transactions in flight beyond the first
};
// Its JSON fields, named as the members (core/json/json_fields.hpp); `kind` travels apart, as its name.
BOOST_DESCRIBE_STRUCT(test_request, (),
                      (message_size, duration_s, streams, reverse, pps, data_ports, rcvbuf, sndbuf, cpu, dscp, mss,
                       segmentation, interval_s, recv_size, congestion, zerocopy, send_copy, recv_copy, client_version,
                       response_size, burst))

// netserve -> netload: the test is registered.
struct ready_msg {
  std::uint64_t test_id = 0;
  std::string cookie;  // identifies TCP data connections
  std::string server_version;
  std::int32_t rcvbuf = 0;  // what the kernel granted
  std::int32_t sndbuf = 0;
  std::string batching;  // "gro", "recvmmsg", ...
  // Reverse UDP_STREAM: how the server sends ("gso", "datagram") and why; empty otherwise.
  std::string segmentation, segmentation_why;
};
// Its JSON fields, named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(ready_msg, (),
                      (test_id, cookie, server_version, rcvbuf, sndbuf, batching, segmentation, segmentation_why))

// netload -> netserve on a new TCP connection: "this is data for test <cookie>, stream n".
struct data_hello {
  std::string cookie;
  std::uint32_t stream = 0;
  std::string token;  // with a key: data_token() (core/wire/native/auth.hpp); on the wire only when not empty
};

// netload -> netserve: data starts at this wall-clock instant.
struct start_msg {
  std::int64_t start_wall_ns = 0;
};

// Counts one side holds for a test: the sender's or the receiver's.
struct side_counts {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t errors = 0;        // sender: datagrams the kernel refused
  std::int64_t start_wall_ns = 0;  // sender: first send; receiver: first arrival
  std::int64_t end_wall_ns = 0;    // receiver: last arrival
  std::int64_t elapsed_ns = 0;     // sender: monotonic duration of the sending
  std::uint64_t kernel_drops = 0;  // receiver: socket drops during the test, in kernel buffers
  std::uint64_t buffers = 0;       // receiver: buffers received (fewer than packets with GRO)
  bool drops_shared = false;       // receiver: another test shared the socket meanwhile
  std::uint64_t sequenced = 0;     // receiver: datagrams that carried a sequence number
  std::uint64_t out_of_order = 0;
  std::uint64_t seq_expected = 0;  // receiver: highest sequence + 1
  double jitter_ns = -1;           // receiver: RFC 3550 jitter, -1 = unknown
  std::string batching;
  std::string error;  // empty when that side ran to its end
  // Receiver: where it counted: "socket", or an XDP engine at the driver, "xdp-native" | "xdp-generic"
  // (netserve --engine xdp); empty on a sending side.
  std::string receive_engine;
  // Receiver with an XDP engine: what its socket path counted too, the datagrams the program passed on
  // (--xdp-pass) or any that reached the port without crossing the engine's interface.
  std::uint64_t socket_packets = 0;
  std::uint64_t socket_bytes = 0;
  // Receiver with an XDP engine: holes in the sequence (forward jumps), over its streams: how many bursts
  // the loss came in (a reordered datagram makes one too, and shows as out of order).
  std::uint64_t seq_gaps = 0;
  // Request/response: answers the client received, or the server sent; and the client's transactions
  // given up unanswered, answers that came after that, and answers to none of its transactions.
  std::uint64_t responses = 0;
  std::uint64_t response_bytes = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t late_responses = 0;
  std::uint64_t unmatched_responses = 0;

  // Receiver: adds one stream's arrival window, buffers and sequence analysis (not packets or bytes,
  // which the totals count).
  void add_received(const flow_totals& r) noexcept;
};
// Its JSON fields, named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(side_counts, (),
                      (packets, bytes, errors, start_wall_ns, end_wall_ns, elapsed_ns, kernel_drops, buffers,
                       drops_shared, sequenced, out_of_order, seq_expected, jitter_ns, batching, error, receive_engine,
                       socket_packets, socket_bytes, seq_gaps, responses, response_bytes, timeouts, late_responses,
                       unmatched_responses))

// netserve -> netload, once per interval when asked: the server side's cumulative counts at the end of
// interval `index` (interval k covers [start + k*len, start + (k+1)*len) on the wall clock).
struct interval_msg {
  std::uint32_t index = 0;
  std::int64_t end_wall_ns = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::vector<tcp_sample> tcp{};  // reverse TCP: the sending streams' connections, by stream ("tcp", on
                                  // the wire only when not empty)
};
// Its JSON fields, named as the members (core/json/json_fields.hpp); `tcp` travels apart.
BOOST_DESCRIBE_STRUCT(interval_msg, (), (index, end_wall_ns, packets, bytes))

// netload -> netserve: the client's side is done; these are its counts.
struct end_msg {
  side_counts counts;
};

// netserve -> netload: the server's side, after draining.
struct result_msg {
  side_counts counts;
  std::uint64_t unattributed = 0;  // datagrams on the port that matched no test while this one ran
  std::optional<host_delta> host;  // the server's host from the start instant to its end; optional
                                   // on the wire ("host"), so a netserve without it is still read
  std::string congestion{};        // reverse TCP: the sending streams' congestion control ("" unknown)
  std::vector<tcp_sample> tcp{};   // reverse TCP: each sending stream's connection at its end; "tcp" and
                                   // "congestion" are on the wire only when known
};

struct error_msg {
  std::string reason;
};

// netserve -> netload, first on every connection when netserve has a key (core/wire/native/auth.hpp).
struct challenge_msg {
  std::string nonce;  // hex
};

// netload -> netserve, the answer to the challenge, before anything else.
struct auth_msg {
  std::string nonce;   // the client's, hex
  std::string answer;  // hex HMAC-SHA256
};

// netserve -> netload, after a right answer: the server's proof that it holds the key too.
struct confirm_msg {
  std::string answer;  // hex HMAC-SHA256
};

using message = std::variant<test_request, ready_msg, data_hello, start_msg, interval_msg, end_msg, result_msg,
                             error_msg, challenge_msg, auth_msg, confirm_msg>;

std::string_view message_type(const message& m) noexcept;
// JSON text of a message (no frame header).
std::string encode_payload(const message& m);
// Throws protocol_error naming the field or the problem.
message decode_payload(std::string_view payload);
// Frame = header + payload.
std::string encode_frame(const message& m);

class frame_mac;  // core/wire/native/auth.hpp
// On a connection past a keyed handshake, frame = header + payload + tag (the length counts both); with
// an unkeyed `mac`, the plain frame.
std::string encode_frame(const message& m, frame_mac& mac);
// The message in a frame's body (what follows the header). With a keyed `mac` the tag is checked before
// the payload is parsed: a frame without a valid one is a protocol_error.
message decode_frame_body(std::string_view body, frame_mac& mac);
// Length from a frame header; throws protocol_error when it is 0 or over the cap.
std::size_t decode_frame_length(const unsigned char (&header)[frame_header_size]);

}  // namespace nb
