#pragma once
// What the kernel knows about a TCP connection (TCP_INFO), sampled on the sending side of a stream, where
// retransmits, the congestion window and the RTT live (iperf3 samples there too). A field the kernel did
// not fill (an older kernel returns a shorter struct) is absent, and null in JSON. No <linux/...> header
// here: <linux/tcp.h> clashes with <netinet/tcp.h>, so only core/sys/tcp_info.cpp includes it.
#include <boost/describe/class.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace nb {

// One connection at one instant. Counters are cumulative over the connection's life.
struct tcp_sample {
  std::int64_t at_ns = 0;                          // when it was taken (wall clock)
  std::optional<std::uint64_t> retransmits;        // segments retransmitted (tcpi_total_retrans)
  std::optional<std::uint64_t> bytes_retrans;      // bytes retransmitted (4.19+)
  std::optional<std::uint64_t> segs_out;           // segments sent, retransmits included (4.2+)
  std::optional<std::uint64_t> cwnd_bytes;         // congestion window: snd_cwnd x snd_mss
  std::optional<std::uint32_t> ssthresh_segments;  // absent while still in the initial slow start
  std::optional<std::uint32_t> rtt_us;             // smoothed RTT
  std::optional<std::uint32_t> rttvar_us;          // its mean deviation
  std::optional<std::uint32_t> min_rtt_us;         // (4.6+)
  std::optional<double> pacing_rate;               // bits/s; absent when unlimited (pacing_unlimited)
  bool pacing_unlimited = false;                   // the kernel paces nothing (~0: no rate yet, no cap)
  std::optional<double> delivery_rate;             // bits/s, the latest delivery-rate sample (4.9+)
  std::optional<bool> delivery_rate_app_limited;   // ...taken while the sender had nothing to send
  std::optional<std::uint32_t> snd_mss;            // bytes
  std::optional<std::uint32_t> pmtu;               // the path MTU TCP uses, bytes
  std::optional<std::uint64_t> busy_us;            // time with data in flight (4.10+)
  std::optional<std::uint64_t> rwnd_limited_us;    // ...of which limited by the peer's receive window
  std::optional<std::uint64_t> sndbuf_limited_us;  // ...of which limited by the send buffer
  std::optional<std::uint64_t> bytes_sent;         // retransmits included (4.19+)
  std::optional<std::uint64_t> bytes_acked;
};
// Its JSON fields, named as the members (core/json/json_fields.hpp); absent ones are null.
BOOST_DESCRIBE_STRUCT(tcp_sample, (),
                      (at_ns, retransmits, bytes_retrans, segs_out, cwnd_bytes, ssthresh_segments, rtt_us, rttvar_us,
                       min_rtt_us, pacing_rate, pacing_unlimited, delivery_rate, delivery_rate_app_limited, snd_mss,
                       pmtu, busy_us, rwnd_limited_us, sndbuf_limited_us, bytes_sent, bytes_acked))

// Reads TCP_INFO of a connected TCP socket; on failure sets `ec` and returns nothing.
std::optional<tcp_sample> read_tcp_sample(int fd, std::error_code& ec);
// A sample from the bytes getsockopt(TCP_INFO) returned (`info` as long as the kernel filled it): the
// fields that lie wholly inside it. Apart for the tests, which hand it a struct an older kernel returns.
tcp_sample tcp_sample_from(std::span<const std::byte> info);
// Each socket's sample now, by position; one that cannot be read is an empty sample (every figure absent).
std::vector<tcp_sample> read_tcp_samples(std::span<const int> fds);
// The socket's congestion control algorithm (TCP_CONGESTION), "" when unknown.
std::string congestion_of(int fd);

// Several streams together at one instant or over an interval: the sum of what adds up (retransmits,
// windows, rates), the mean of the RTTs, the smallest MSS and path MTU. Each is absent when no stream had it.
struct tcp_summary {
  std::optional<std::uint64_t> retransmits;  // an interval's: the retransmits within it
  std::optional<double> retransmit_percent;  // retransmits / segments sent x 100, the same span
  std::optional<double> rtt_us;              // mean over the streams
  std::optional<std::uint32_t> rtt_max_us;
  std::optional<double> rttvar_us;             // mean over the streams
  std::optional<std::uint64_t> cwnd_bytes;     // sum
  std::optional<double> pacing_rate;           // sum, bits/s, of the streams that are paced
  std::optional<double> delivery_rate;         // sum, bits/s
  std::optional<std::uint32_t> snd_mss, pmtu;  // smallest
};
// Its JSON fields, named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(tcp_summary, (),
                      (retransmits, retransmit_percent, rtt_us, rtt_max_us, rttvar_us, cwnd_bytes, pacing_rate,
                       delivery_rate, snd_mss, pmtu))

// The summary and the samples it sums up; in JSON, the summary's fields, "congestion" when known (a
// result's: the interval reports come before the server names it in reverse) and "streams".
struct tcp_figures : tcp_summary {
  std::optional<std::string> congestion;  // the congestion control algorithm, "" unknown
  std::vector<tcp_sample> streams;        // per stream, by stream number; cumulative samples
};

// The figures of `now`'s samples; `before` (same streams, an interval earlier; empty: since the start)
// turns the cumulative retransmits and segments into the interval's.
tcp_figures summarize(std::vector<tcp_sample> now, const std::vector<tcp_sample>& before = {});

nlohmann::json to_json(const tcp_figures& t);
// Throws std::runtime_error naming the field when it is not such an object.
tcp_figures tcp_figures_from_json(const nlohmann::json& j);
nlohmann::json to_json(const std::vector<tcp_sample>& samples);
// Throws std::runtime_error naming the field when it is not an array of samples.
std::vector<tcp_sample> tcp_samples_from_json(const nlohmann::json& j);

}  // namespace nb
