#pragma once
// The result of one test as netload reports it and the harness reads it back: the schema lives here so
// both programs agree on it. Counts are 64-bit; sent = received + lost is checked, never assumed.
#include "core/host/host_stats.hpp"
#include "core/result/latency_histogram.hpp"
#include "core/sys/tcp_info.hpp"
#include "core/wire/native/protocol.hpp"

#include <boost/describe/class.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nb {

inline constexpr const char* result_schema = "netload.result/1";

struct flow_figures {
  std::uint64_t packets = 0;       // datagrams (UDP) or messages of message_size bytes (TCP)
  std::uint64_t bytes = 0;         // payload bytes
  std::uint64_t errors = 0;        // sender: datagrams refused by the local kernel (never sent)
  double seconds = 0;              // the test duration, as the sending side measured it (monotonic)
  double pps = 0;                  // packets / seconds
  double bits_per_second = 0;      // payload bits / seconds
  std::int64_t first_ns = 0;       // sender: first send; receiver: first arrival (wall clock)
  std::int64_t last_ns = 0;        // receiver: last arrival
  std::int32_t socket_buffer = 0;  // bytes the kernel granted (SO_SNDBUF / SO_RCVBUF); 0: not reported
                                   // (a stock server whose output does not say)
  std::string batching;            // how the data plane moved datagrams: gso, sendmmsg, gro, recvmmsg, and
                                   // what the kernel lacked: "gro, no drop count" (core/sys/kernel_features.hpp)
};
// Its JSON fields, named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(flow_figures, (),
                      (packets, bytes, errors, seconds, pps, bits_per_second, first_ns, last_ns, socket_buffer,
                       batching))

struct loss_figures {
  std::uint64_t packets = 0;  // sent - received
  double percent = 0;
  std::uint64_t receiver_kernel_drops = 0;  // datagrams dropped by the receiving socket (buffer overflow)
  std::uint64_t kernel_drop_buffers = 0;    // the kernel's own count: buffers, which with GRO hold many datagrams
  bool drops_estimated = false;             // GRO: datagrams = buffers x datagrams per received buffer
  std::uint64_t path = 0;                   // the rest: lost between the two sockets
  bool drops_shared = false;                // the receiving socket also served another test meanwhile
  bool reconciles = false;                  // sent == received + lost, path + drops == lost
  std::string note;                         // why it does not reconcile, or caveats
};
// Its JSON fields, named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(loss_figures, (),
                      (packets, percent, receiver_kernel_drops, kernel_drop_buffers, drops_estimated, path,
                       drops_shared, reconciles, note))

struct interval_figures {
  std::uint32_t index = 0;
  std::int64_t start_ns = 0, end_ns = 0;  // wall clock
  std::uint64_t sent_packets = 0, sent_bytes = 0;
  std::uint64_t received_packets = 0, received_bytes = 0;
  bool complete = false;             // both sides' samples arrived (else only one side is counted)
  std::optional<tcp_figures> tcp{};  // TCP: the sending streams' connections at the interval's end,
                                     // retransmits within it; "tcp", absent for UDP
  // Request/response: the round trips of the transactions answered within the interval (the client's
  // histogram now less at the interval's start): latency_histogram::summary_json() and its "histogram"
  // (to_json()); "latency", absent for other tests.
  std::optional<nlohmann::json> latency{};
};
// Its JSON fields, named as the members (core/json/json_fields.hpp); `tcp` and `latency` travel apart.
BOOST_DESCRIBE_STRUCT(interval_figures, (),
                      (index, start_ns, end_ns, sent_packets, sent_bytes, received_packets, received_bytes, complete))

// A way the data plane ran that netload chooses from where the peer is unless the user says: the mode,
// whether it was chosen so (else the user did), and why.
struct mode_choice {
  std::string mode;
  bool automatic = false;
  std::string why;
};
BOOST_DESCRIBE_STRUCT(mode_choice, (), (mode, automatic, why))
// How a TCP_STREAM receiver took its bytes in (core/policy/receive_mode.hpp): "copy" or "discard".
using receive_figures = mode_choice;
// How a UDP sender handed its datagrams to the kernel (core/data/segmentation.hpp): "gso" or "datagram".
using segmentation_figures = mode_choice;

// Where the limit was (core/policy/verdict.hpp decides): limit is one of verdict_limits, text says why.
struct limit_verdict {
  std::string limit;
  std::string text;
};

// A test the user stopped (SIGINT, SIGTERM) after its traffic began: the figures are real, over the
// seconds measured before the stop, and say so. A stop before the start instant sends nothing and
// leaves a failed result instead.
struct interruption {
  std::string signal;     // "SIGINT", "SIGTERM"
  double measured_s = 0;  // from the start instant to the stop
  double planned_s = 0;   // the test's duration as asked
};
inline constexpr const char* verdict_limits[] = {"sender-cpu",    "receiver-cpu", "receiver-socket",
                                                 "before-socket", "path",         "none"};

// What each host was doing during the test window; absent when it was not sampled (an older netserve,
// a failed test, /proc unreadable).
struct host_figures {
  std::optional<host_delta> sender, receiver;
};

// A paced test (--pps, --rate) against its target, from the sending side's figures (netserve's in
// reverse). Rates are the sender's, over its own elapsed time. The error is on payload bit/s, which is
// exact for TCP (whole messages are only bytes / message_size) and the same as the error on pps for UDP.
struct target_figures {
  double requested_pps = 0;
  double achieved_pps = 0;
  double requested_bits_per_second = 0;  // payload: requested_pps x message_size x 8
  double achieved_bits_per_second = 0;
  double error_percent = 0;  // (achieved - requested) / requested x 100
  bool met = false;          // |error_percent| <= target_tolerance_percent; a ceiling: not above it
  // TCP: the rate is a ceiling, as iperf's TCP -b: TCP's congestion control may hold a test under it,
  // which is no miss; only a sender above it is.
  bool ceiling = false;
};
// Its JSON fields, named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(target_figures, (),
                      (requested_pps, achieved_pps, requested_bits_per_second, achieved_bits_per_second, error_percent,
                       met, ceiling))
inline constexpr double target_tolerance_percent = 1.0;

// --omit (iperf3's -O): the test's first seconds ran but are left out of the sender's and the receiver's
// figures (counts, seconds, rates, the target). The loss and the reconciliation stay the whole run's: at
// the window's start the two sides differ by what was in flight, so its counts do not reconcile exactly.
struct omit_figures {
  double seconds = 0;
  std::uint64_t sent_packets = 0, sent_bytes = 0, received_packets = 0, received_bytes = 0;  // the whole run's
};
BOOST_DESCRIBE_STRUCT(omit_figures, (), (seconds, sent_packets, sent_bytes, received_packets, received_bytes))

// A request/response test (UDP_RR, TCP_RR): its transactions as the client timed them. A transaction is
// a request and its answer; requests reconcile as a stream's datagrams do (sender, receiver and loss are
// the requests'), answers here: the server's sent = the client's received + responses_lost, and every
// request is answered or given up: requests = transactions + timeouts.
struct rr_figures {
  std::uint32_t request_size = 0, response_size = 0;
  std::uint32_t burst = 0;             // transactions in flight beyond the first
  std::uint64_t transactions = 0;      // answered in time (timed)
  double transactions_per_second = 0;  // over the client's sending time
  std::uint64_t responses_sent = 0;    // by the server
  std::uint64_t responses_lost = 0;    // sent by the server, never received
  std::uint64_t timeouts = 0;          // given up unanswered
  std::uint64_t late = 0;              // answered after being given up (not timed)
  std::uint64_t unmatched = 0;         // answers to none of the client's transactions
  latency_histogram latency;           // every timed round trip; "latency" (summary) and
                                       // "histogram" (buckets, for an exact merge) in the JSON
};
// Its JSON fields but the latency's, named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(rr_figures, (),
                      (request_size, response_size, burst, transactions, transactions_per_second, responses_sent,
                       responses_lost, timeouts, late, unmatched))

struct test_result {
  bool ok = false;
  std::string error;  // why the test failed; no figures are reported then
  test_kind kind = test_kind::udp_stream;
  std::string host;
  std::uint16_t port = 0;
  std::uint32_t message_size = 0;
  std::uint32_t streams = 1;
  bool reverse = false;
  nlohmann::json options;  // the effective options, as given
  std::string client_version, server_version;
  double requested_start = 0;  // --start-at, epoch seconds; 0 when none
  double actual_start = 0;     // first datagram, epoch seconds
  flow_figures sender, receiver;
  loss_figures loss;
  std::optional<double> jitter_ms;  // messages of 16 bytes or more
  std::optional<std::uint64_t> out_of_order;
  int path_mtu = 0;
  int mss = 0;  // TCP
  std::vector<interval_figures> intervals;
  // Where the receiver counted: "socket", or at its driver, "xdp-native" | "xdp-generic" (netserve --engine
  // xdp); "" in results written before it was recorded.
  std::string receive_engine;
  // Who counted the receiver's figures: "netserve 0.9.1", "netload 0.9.1" (reverse), or a stock server whose
  // own count netload took ("iperf3 3.12"); "" in results written before it was recorded.
  std::string receiver_counted_by;
  // With an XDP engine: what the receiver's socket path counted as well (packets, bytes).
  std::optional<std::pair<std::uint64_t, std::uint64_t>> socket_received;
  std::optional<std::uint64_t> seq_gaps;  // with an XDP engine, messages of 16 bytes or more: holes in the sequence
  std::optional<tcp_figures> tcp;         // TCP: the sending streams' connections at their end (TCP_INFO);
                                          // "tcp": null when unknown, absent for UDP
  std::optional<target_figures> target;   // paced tests only
  std::optional<omit_figures> omit;       // with --omit only
  std::optional<rr_figures> rr;           // request/response tests only
  host_figures hosts;
  std::optional<limit_verdict> verdict;
  // An unpaced UDP_STREAM the receiver's side limited: what its received figure means (it is not the
  // sender's speed nor the path's lossless rate; core/policy/verdict.hpp figure_meaning). "receiver_note",
  // null otherwise.
  std::optional<std::string> receiver_note;
  std::optional<receive_figures> receive;            // TCP_STREAM: "receive", null otherwise (and in older results)
  std::optional<segmentation_figures> segmentation;  // UDP_STREAM's sender: "segmentation", null otherwise
  std::optional<interruption> interrupted;           // null unless the user stopped the test early
};
// The JSON fields of what was asked and of whom, named as the members; to_json and result_from_json
// write and read the rest, figure by figure.
BOOST_DESCRIBE_STRUCT(test_result, (),
                      (ok, error, host, port, message_size, streams, reverse, options, client_version, server_version,
                       requested_start, actual_start, path_mtu, mss))

// Fills loss and reconciliation from sender and receiver counts. `drop_buffers` is the receiving socket's
// drop count and `buffers` the buffers it delivered: with GRO one buffer carries many datagrams, and the
// kernel counts a dropped buffer once, so drops in datagrams are then an estimate (flagged).
// TCP reconciles on bytes: both sides' messages (and their pps) are set here from bytes (tcp_messages),
// and the loss is what the bytes say, so per-write counts can never produce a false mismatch.
void reconcile(test_result& r, std::uint64_t drop_buffers, std::uint64_t buffers);
// A stock server as the receiver (netload --peer netserver / --peer iperf3), named by its batching
// ("iperf3, no drop count"): it reports no count of its socket's drops. Empty for any other receiver.
std::string_view stock_receiver(std::string_view batching) noexcept;
// Request/response: the answers' reconciliation, after reconcile() did the requests'. `client` and
// `server` are the two sides' counts; a mismatch clears loss.reconciles and says why in loss.note.
void reconcile_rr(test_result& r, const side_counts& client, const side_counts& server);
// The target check of a paced test from its sender's figures (rates computed); requested_pps > 0. A
// ceiling (TCP) is met at or under the rate, allowing the tolerance and one message in progress on each of
// `streams` streams.
target_figures check_target(double requested_pps, std::uint32_t message_size, const flow_figures& sender,
                            bool ceiling = false, std::uint32_t streams = 1);
// Rates from counts and seconds.
void compute_rates(flow_figures& f);
// One side's figures from its counts over `seconds`, rates computed: a sender's first send is `first_ns`
// (where another clock than the counts' says it), a receiver's window its counts' first and last arrival.
flow_figures sender_figures(const side_counts& c, double seconds, std::int64_t first_ns, std::int32_t socket_buffer,
                            std::string batching);
flow_figures receiver_figures(const side_counts& c, double seconds, std::int32_t socket_buffer, std::string batching);

// Makes every text of `r` a peer may have put there (a server's version, its batching and engine names, its
// congestion control, its error reasons, and what was said from them) printable (core/base/text.hpp), so a
// terminal, a log or a report shows it as text: once, where the result is made, before it is shown.
void escape_peer_text(test_result& r);

nlohmann::json to_json(const test_result& r);
nlohmann::json to_json(const interval_figures& i);
// Throws std::runtime_error naming the field when the JSON is not an interval of this schema.
interval_figures interval_from_json(const nlohmann::json& j);
// Throws std::runtime_error naming the field when the JSON is not a result of this schema.
test_result result_from_json(const nlohmann::json& j);

}  // namespace nb
