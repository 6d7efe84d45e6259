#pragma once
// TCP_INFO, sampled on the sending side, where retransmits, cwnd and RTT live. A field an older kernel
// did not fill is absent. <linux/tcp.h> clashes with <netinet/tcp.h>: only tcp_info.cpp includes it.
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

// Counters are cumulative over the connection's life.
struct tcp_sample {
  std::int64_t at_ns = 0;                          // wall clock
  std::optional<std::uint64_t> retransmits;        // tcpi_total_retrans
  std::optional<std::uint64_t> bytes_retrans;      // 4.19+
  std::optional<std::uint64_t> segs_out;           // retransmits included (4.2+)
  std::optional<std::uint64_t> cwnd_bytes;         // snd_cwnd x snd_mss
  std::optional<std::uint32_t> ssthresh_segments;  // absent in the initial slow start
  std::optional<std::uint32_t> rtt_us;
  std::optional<std::uint32_t> rttvar_us;
  std::optional<std::uint32_t> min_rtt_us;        // 4.6+
  std::optional<double> pacing_rate;              // bits/s; absent when unlimited
  bool pacing_unlimited = false;                  // ~0: no rate yet, no cap
  std::optional<double> delivery_rate;            // bits/s (4.9+)
  std::optional<bool> delivery_rate_app_limited;  // the sender had nothing to send
  std::optional<std::uint32_t> snd_mss;
  std::optional<std::uint32_t> pmtu;
  std::optional<std::uint64_t> busy_us;            // data in flight (4.10+)
  std::optional<std::uint64_t> rwnd_limited_us;    // of busy_us
  std::optional<std::uint64_t> sndbuf_limited_us;  // of busy_us
  std::optional<std::uint64_t> bytes_sent;         // retransmits included (4.19+)
  std::optional<std::uint64_t> bytes_acked;
};
BOOST_DESCRIBE_STRUCT(tcp_sample, (),
                      (at_ns, retransmits, bytes_retrans, segs_out, cwnd_bytes, ssthresh_segments, rtt_us, rttvar_us,
                       min_rtt_us, pacing_rate, pacing_unlimited, delivery_rate, delivery_rate_app_limited, snd_mss,
                       pmtu, busy_us, rwnd_limited_us, sndbuf_limited_us, bytes_sent, bytes_acked))

std::optional<tcp_sample> read_tcp_sample(int fd, std::error_code& ec);
// The fields wholly inside `info`, as long as the kernel filled it; apart for the tests of older kernels.
tcp_sample tcp_sample_from(std::span<const std::byte> info);
// One that cannot be read is an empty sample.
std::vector<tcp_sample> read_tcp_samples(std::span<const int> fds);
// "" when unknown.
std::string congestion_of(int fd);

// Several streams together; each figure absent when no stream had it.
struct tcp_summary {
  std::optional<std::uint64_t> retransmits;  // within the interval
  std::optional<double> retransmit_percent;
  std::optional<double> rtt_us;  // mean over the streams
  std::optional<std::uint32_t> rtt_max_us;
  std::optional<double> rttvar_us;             // mean over the streams
  std::optional<std::uint64_t> cwnd_bytes;     // sum
  std::optional<double> pacing_rate;           // sum, bits/s, of the paced streams
  std::optional<double> delivery_rate;         // sum, bits/s
  std::optional<std::uint32_t> snd_mss, pmtu;  // smallest
};
BOOST_DESCRIBE_STRUCT(tcp_summary, (),
                      (retransmits, retransmit_percent, rtt_us, rtt_max_us, rttvar_us, cwnd_bytes, pacing_rate,
                       delivery_rate, snd_mss, pmtu))

struct tcp_figures : tcp_summary {
  std::optional<std::string> congestion;  // absent before the server names it (reverse); "" unknown
  std::vector<tcp_sample> streams;        // by stream number; cumulative
};

// `before`: the same streams an interval earlier (empty: since the start).
tcp_figures summarize(std::vector<tcp_sample> now, const std::vector<tcp_sample>& before = {});

nlohmann::json to_json(const tcp_figures& t);
// Throws std::runtime_error naming the field.
tcp_figures tcp_figures_from_json(const nlohmann::json& j);
nlohmann::json to_json(const std::vector<tcp_sample>& samples);
// Throws std::runtime_error naming the field.
std::vector<tcp_sample> tcp_samples_from_json(const nlohmann::json& j);

}  // namespace nb
