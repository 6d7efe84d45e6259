#pragma once
// netload, netserve and the harness refuse a request beyond the same limits.
#include <cstdint>

namespace nb {

// 65535 less the IPv4 and UDP headers (IPv6 would allow 20 more).
inline constexpr std::uint32_t max_udp_message_size = 65535 - 20 - 8;

// netserve holds one per stream: this bounds what a request makes it allocate.
inline constexpr std::uint32_t max_tcp_message_size = 16u << 20;

// TCP_MAXSEG outside TCP_MIN_MSS..MAX_TCP_WINDOW (include/net/tcp.h) is EINVAL.
inline constexpr std::uint32_t min_mss = 88;
inline constexpr std::uint32_t max_mss = 32767;

inline constexpr std::uint32_t max_streams_per_test = 64;

// Transactions in flight beyond the first (netperf's burst); past it a test measures our own queueing.
inline constexpr std::uint32_t max_rr_burst = 1024;

inline constexpr int max_dscp = 63;

// Linux doubles SO_SNDBUF/SO_RCVBUF into an int, so it takes at most INT_MAX / 2.
inline constexpr std::int32_t max_socket_buffer_request = 1 << 30;

inline constexpr double min_interval_s = 0.05;

inline constexpr std::uint64_t max_reverse_tcp_buffer_bytes = 64u << 20;

// Far above any real link's packet rate, so only a typo is refused.
inline constexpr double max_request_pps = 1e10;

// A paced sender that fell behind catches up at most this much above its rate, and never sends more than
// this burst at once: what a policer on the circuit lets through.
inline constexpr double pacing_catch_up = 1.02;
inline constexpr double pacing_max_burst_s = 0.010;

// The kernel's default NR_CPUS on x86-64, less one.
inline constexpr int max_cpu_number = 4095;

// Datagrams per sendmmsg/recvmmsg call, far past the gain of batching.
inline constexpr std::uint32_t max_batch = 4096;

inline constexpr double max_start_lead_s = 30;

}  // namespace nb
