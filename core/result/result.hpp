#pragma once
// One test's result, as netload writes it and the harness reads it back.
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
  std::uint64_t packets = 0;  // datagrams, or TCP messages
  std::uint64_t bytes = 0;
  std::uint64_t errors = 0;  // sender: refused by the local kernel
  double seconds = 0;        // as the sending side measured it
  double pps = 0;
  double bits_per_second = 0;      // payload
  std::int64_t first_ns = 0;       // wall clock
  std::int64_t last_ns = 0;        // receiver only
  std::int32_t socket_buffer = 0;  // as the kernel granted it; 0: not reported
  std::string batching;            // core/sys/kernel_features.hpp
};
// JSON fields named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(flow_figures, (),
                      (packets, bytes, errors, seconds, pps, bits_per_second, first_ns, last_ns, socket_buffer,
                       batching))

struct loss_figures {
  std::uint64_t packets = 0;
  double percent = 0;
  std::uint64_t receiver_kernel_drops = 0;
  std::uint64_t kernel_drop_buffers = 0;  // with GRO a buffer holds many datagrams
  bool drops_estimated = false;
  std::uint64_t path = 0;  // lost between the two sockets
  bool drops_shared = false;
  bool reconciles = false;  // sent == received + lost, path + drops == lost
  std::string note;
};
BOOST_DESCRIBE_STRUCT(loss_figures, (),
                      (packets, percent, receiver_kernel_drops, kernel_drop_buffers, drops_estimated, path,
                       drops_shared, reconciles, note))

struct interval_figures {
  std::uint32_t index = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint64_t sent_packets = 0, sent_bytes = 0;
  std::uint64_t received_packets = 0, received_bytes = 0;
  bool complete = false;  // both sides' samples arrived
  std::optional<tcp_figures> tcp{};
  std::optional<nlohmann::json> latency{};  // request/response: the interval's round trips
};
// `tcp` and `latency` travel apart.
BOOST_DESCRIBE_STRUCT(interval_figures, (),
                      (index, start_ns, end_ns, sent_packets, sent_bytes, received_packets, received_bytes, complete))

// A data-plane mode netload chose from where the peer is, unless the user did.
struct mode_choice {
  std::string mode;
  bool automatic = false;
  std::string why;
};
BOOST_DESCRIBE_STRUCT(mode_choice, (), (mode, automatic, why))
using receive_figures = mode_choice;       // core/policy/receive_mode.hpp
using segmentation_figures = mode_choice;  // core/data/segmentation.hpp

// limit is one of verdict_limits (core/policy/verdict.hpp).
struct limit_verdict {
  std::string limit;
  std::string text;
};

// Stopped by a signal after the traffic began: the figures are real, over measured_s.
struct interruption {
  std::string signal;
  double measured_s = 0;
  double planned_s = 0;
};
inline constexpr const char* verdict_limits[] = {"sender-cpu",    "receiver-cpu", "receiver-socket",
                                                 "before-socket", "path",         "none"};

struct host_figures {
  std::optional<host_delta> sender, receiver;
};

// The error is on payload bits: exact for TCP, whose whole messages are only bytes / message_size.
struct target_figures {
  double requested_pps = 0;
  double achieved_pps = 0;
  double requested_bits_per_second = 0;
  double achieved_bits_per_second = 0;
  double error_percent = 0;
  bool met = false;
  bool ceiling = false;  // TCP, as iperf's -b: congestion control may hold it under, which is no miss
};
BOOST_DESCRIBE_STRUCT(target_figures, (),
                      (requested_pps, achieved_pps, requested_bits_per_second, achieved_bits_per_second, error_percent,
                       met, ceiling))
inline constexpr double target_tolerance_percent = 1.0;

// --omit: the loss stays the whole run's, as the window's own counts differ by what was in flight.
struct omit_figures {
  double seconds = 0;
  std::uint64_t sent_packets = 0, sent_bytes = 0, received_packets = 0, received_bytes = 0;
};
BOOST_DESCRIBE_STRUCT(omit_figures, (), (seconds, sent_packets, sent_bytes, received_packets, received_bytes))

// Requests reconcile as datagrams do; answers here: requests = transactions + timeouts.
struct rr_figures {
  std::uint32_t request_size = 0, response_size = 0;
  std::uint32_t burst = 0;  // in flight beyond the first
  std::uint64_t transactions = 0;
  double transactions_per_second = 0;
  std::uint64_t responses_sent = 0;
  std::uint64_t responses_lost = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t late = 0;  // answered after a timeout, not timed
  std::uint64_t unmatched = 0;
  latency_histogram latency;
};
BOOST_DESCRIBE_STRUCT(rr_figures, (),
                      (request_size, response_size, burst, transactions, transactions_per_second, responses_sent,
                       responses_lost, timeouts, late, unmatched))

struct test_result {
  bool ok = false;
  std::string error;  // no figures then
  test_kind kind = test_kind::udp_stream;
  std::string host;
  std::uint16_t port = 0;
  std::uint32_t message_size = 0;
  std::uint32_t streams = 1;
  bool reverse = false;
  nlohmann::json options;
  std::string client_version, server_version;
  double requested_start = 0;  // epoch seconds
  double actual_start = 0;
  flow_figures sender, receiver;
  loss_figures loss;
  std::optional<double> jitter_ms;  // needs messages of 16 bytes
  std::optional<std::uint64_t> out_of_order;
  int path_mtu = 0;
  int mss = 0;
  std::vector<interval_figures> intervals;
  std::string receive_engine;
  std::string receiver_counted_by;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> socket_received;  // XDP: packets, bytes
  std::optional<std::uint64_t> seq_gaps;
  std::optional<tcp_figures> tcp;
  std::optional<target_figures> target;
  std::optional<omit_figures> omit;
  std::optional<rr_figures> rr;
  host_figures hosts;
  std::optional<limit_verdict> verdict;
  std::optional<std::string> receiver_note;  // core/policy/verdict.hpp figure_meaning
  std::optional<receive_figures> receive;
  std::optional<segmentation_figures> segmentation;
  std::optional<interruption> interrupted;
};
// to_json and result_from_json write and read the rest, figure by figure.
BOOST_DESCRIBE_STRUCT(test_result, (),
                      (ok, error, host, port, message_size, streams, reverse, options, client_version, server_version,
                       requested_start, actual_start, path_mtu, mss))

// With GRO the kernel counts a dropped buffer once, so drops in datagrams are an estimate (flagged).
// TCP reconciles on bytes, so per-write counts cannot produce a false mismatch.
void reconcile(test_result& r, std::uint64_t drop_buffers, std::uint64_t buffers);
// The stock server named by `batching`, which reports no drop count; empty for any other receiver.
std::string_view stock_receiver(std::string_view batching) noexcept;
// The answers' reconciliation, after reconcile() did the requests'.
void reconcile_rr(test_result& r, const side_counts& client, const side_counts& server);
// What a ceiling of `bytes_per_second` lets `streams` senders put out in `seconds`: the tolerance and the message
// each stream's pacer begins while it is due.
double ceiling_bytes(double bytes_per_second, double seconds, std::uint32_t streams, std::uint32_t message_size);
// A ceiling counts from the sender's start: with `left_out` (--omit) over the left-out seconds and the window
// together, the window alone allowed the pacer's catch-up after a stall.
target_figures check_target(double requested_pps, std::uint32_t message_size, const flow_figures& sender,
                            bool ceiling = false, std::uint32_t streams = 1, const omit_figures* left_out = nullptr);
void compute_rates(flow_figures& f);
flow_figures sender_figures(const side_counts& c, double seconds, std::int64_t first_ns, std::int32_t socket_buffer,
                            std::string batching);
flow_figures receiver_figures(const side_counts& c, double seconds, std::int32_t socket_buffer, std::string batching);

// Makes every text a peer may have put in `r` printable, once, where the result is made.
void escape_peer_text(test_result& r);

nlohmann::json to_json(const test_result& r);
nlohmann::json to_json(const interval_figures& i);
// These throw std::runtime_error naming the field.
interval_figures interval_from_json(const nlohmann::json& j);
test_result result_from_json(const nlohmann::json& j);

}  // namespace nb
