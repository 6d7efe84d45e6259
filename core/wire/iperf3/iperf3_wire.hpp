#pragma once
// iperf3's control protocol (3.x, as in esnet/iperf's src/iperf_api.c), the parts a server speaks: the
// 37-byte cookie a client sends first on every connection, the state bytes, the parameters and results
// as JSON behind a 4-byte big-endian length, and the error codes a server refuses a test with. What comes
// from the peer is parsed with the JSON depth bound (core/json/json_text.hpp) and a size cap; every value is
// type-checked, and a malformed one is a protocol_error, never a guess.
#include "core/wire/native/protocol.hpp"

#include <boost/describe/class.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nb::iperf3 {

// 36 characters of [a-z2-7] and a NUL (iperf3's make_cookie).
inline constexpr std::size_t cookie_size = 37;
// A cookie's characters. What a stock iperf3 client sends first starts with one; netload's frames start
// with a length whose first byte is 0 (a frame is at most 64 KiB).
constexpr bool is_cookie_char(unsigned char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7'); }
bool is_cookie(std::string_view bytes) noexcept;

// The state byte, one signed char on the control connection (src/iperf.h).
enum class state : signed char {
  test_start = 1,
  test_running = 2,
  test_end = 4,
  param_exchange = 9,
  create_streams = 10,
  server_terminate = 11,
  client_terminate = 12,
  exchange_results = 13,
  display_results = 14,
  iperf_done = 16,
  access_denied = -1,
  server_error = -2,
};

// The error codes a SERVER_ERROR carries (i_errno, src/iperf_api.h); the client prints its own text for
// each, so the code is all a refusal can say.
enum class error : std::int32_t {
  duration = 5,          // "test duration too long"
  num_streams = 6,       // "number of parallel streams too large"
  block_size = 7,        // "block size too large"
  buf_size = 8,          // "socket buffer size too large"
  mss = 10,              // "TCP MSS too large"
  unimplemented = 13,    // "an option you are trying to set is not implemented yet"
  udp_block_size = 20,   // "block size invalid"
  reverse_bidir = 25,    // "cannot be both reverse and bidirectional"
  recv_params = 114,     // "unable to receive parameters from client"
  recv_results = 117,    // "unable to receive results from client"
  protocol = 131,        // "protocol does not exist"
  set_congestion = 134,  // "unable to set TCP_CONGESTION"
  auth_test = 142,       // "test authorization failed"
  stream_accept = 204,   // "unable to accept stream connection"
};

// The 4-byte datagram a UDP stream announces itself with, and the server's answer, both an unsigned int
// in the host's byte order as iperf3 writes them (src/iperf_udp.c).
inline constexpr std::uint32_t udp_connect_msg = 0x36373839;
inline constexpr std::uint32_t udp_connect_reply = 0x39383736;

// Parameters and results are small (a result of 128 streams is about 25 KB); anything larger is refused
// before it is read.
inline constexpr std::size_t max_json_size = 64 * 1024;

// What a client asks for (send_parameters). Numbers travel as JSON numbers; flags as present keys.
struct params {
  bool tcp = false, udp = false, sctp = false, mptcp = false;
  std::int64_t omit = 0;
  std::int64_t server_affinity = -1;
  std::int64_t time = 0;         // seconds; 0 with num or blockcount
  std::uint64_t num = 0;         // -n: bytes
  std::uint64_t blockcount = 0;  // -k: blocks
  std::int64_t mss = 0;
  bool nodelay = false;
  std::int64_t parallel = 1;
  bool reverse = false, bidirectional = false;
  std::int64_t window = 0;
  std::int64_t len = 0;
  std::uint64_t bandwidth = 0;  // bit/s per stream, 0 unlimited
  std::uint64_t fqrate = 0;
  std::int64_t pacing_timer = 0;
  std::int64_t burst = 0;
  std::int64_t tos = 0;
  std::int64_t flowlabel = 0;
  std::string title, extra_data, congestion, congestion_used;
  bool get_server_output = false;
  bool udp_counters_64bit = false;
  bool repeating_payload = false;
  std::int64_t zerocopy = 0;
  std::int64_t dont_fragment = 0;
  std::int64_t skip_rx_copy = 0;  // 3.17 and later: the receiver discards in the kernel (MSG_TRUNC)
  std::string authtoken;
  std::string client_version;
  std::vector<std::string> unknown;  // keys this parser does not know, for the refusal
};
// Its fields in iperf3's parameters, named as the members, all optional; MSS and TOS, upper case there,
// are read apart.
BOOST_DESCRIBE_STRUCT(params, (),
                      (tcp, udp, sctp, mptcp, omit, server_affinity, time, num, blockcount, nodelay, parallel, reverse,
                       bidirectional, window, len, bandwidth, fqrate, pacing_timer, burst, flowlabel, title, extra_data,
                       congestion, congestion_used, get_server_output, udp_counters_64bit, repeating_payload, zerocopy,
                       dont_fragment, skip_rx_copy, authtoken, client_version))

// One stream's figures in a results message (send_results).
struct stream_result {
  std::int64_t id = 0;
  std::uint64_t bytes = 0;
  std::int64_t retransmits = -1;  // -1: not known (a receiver's)
  double jitter = 0;              // seconds
  std::uint64_t errors = 0;       // lost datagrams
  std::uint64_t packets = 0;
  double start_time = 0, end_time = 0;  // seconds from the stream's start
};
// Its fields in iperf3's results, named as the members.
BOOST_DESCRIBE_STRUCT(stream_result, (), (id, bytes, retransmits, jitter, errors, packets, start_time, end_time))

struct results {
  double cpu_util_total = 0, cpu_util_user = 0, cpu_util_system = 0;
  std::int64_t sender_has_retransmits = -1;
  std::string congestion_used;
  std::vector<stream_result> streams;
  std::string server_output_text;  // --get-server-output: what the server says of the test
};

// Throw protocol_error naming the field or the problem.
params parse_params(std::string_view json);
results parse_results(std::string_view json);
// JSON text, unformatted, as cJSON_PrintUnformatted would give it.
std::string encode_params(const params& p);
std::string encode_results(const results& r);

// Length header + JSON. decode_length throws protocol_error past max_json_size.
std::string frame(std::string_view json);
std::size_t decode_length(const unsigned char (&header)[4]);

}  // namespace nb::iperf3
