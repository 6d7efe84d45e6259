#pragma once
// The limits of a test request, in one place: netload refuses a command line beyond them, netserve a
// request, the harness a plan, each with its own words but the same figures.
#include <cstdint>

namespace nb {

// The largest UDP payload: an IPv4 datagram's 16-bit total length, 65535, less the 20-byte IP header
// and the 8-byte UDP header. (IPv6 would allow 20 bytes more; netload keeps to the IPv4 figure.)
inline constexpr std::uint32_t max_udp_message_size = 65535 - 20 - 8;

// The largest TCP message (one send() each): netserve holds a message's worth of buffer per stream, so
// this bounds what one request can make it allocate. Our own choice, not a protocol's.
inline constexpr std::uint32_t max_tcp_message_size = 16u << 20;

// TCP_MAXSEG: Linux refuses less than TCP_MIN_MSS (88) and more than MAX_TCP_WINDOW (32767), both in
// include/net/tcp.h, with EINVAL. (The kernel itself may use a larger MSS on a 64 KiB-MTU path such as
// loopback; a socket cannot ask for one.)
inline constexpr std::uint32_t min_mss = 88;
inline constexpr std::uint32_t max_mss = 32767;

// Streams (one thread and one socket each) per test: netload asks for at most this many, and netserve
// allows as many by default (its --max-streams changes that for other clients).
inline constexpr std::uint32_t max_streams_per_test = 64;

// Request/response: transactions in flight beyond the first (netperf's burst). A window of this many
// requests of the largest size would still fit the default TCP buffers' autotuning many times over;
// past it a test measures queueing in our own sockets, not the path.
inline constexpr std::uint32_t max_rr_burst = 1024;

// DSCP is the 6-bit top of the IP TOS / traffic class byte.
inline constexpr int max_dscp = 63;

// A socket buffer size a test may ask for (netperf's -s / -S): Linux doubles the figure it is given
// into an int and so takes at most INT_MAX / 2, about 1 GiB.
inline constexpr std::int32_t max_socket_buffer_request = 1 << 30;

// The shortest report interval (--interval), for netload and netserve alike.
inline constexpr double min_interval_s = 0.05;

// What one reverse TCP test may make netserve hold in send buffers: one message per stream.
inline constexpr std::uint64_t max_reverse_tcp_buffer_bytes = 64u << 20;

// The highest packet rate a request may ask for: ten times a 100 Gbit/s link of 64-byte frames (about
// 150 M pps), so a typo is refused and a real target never is.
inline constexpr double max_request_pps = 1e10;

// The highest CPU number a test may be pinned to: the kernel's default NR_CPUS on x86-64 (CONFIG_NR_CPUS
// up to 8192 is possible, but netperf's -T and iperf3's -A users name real cores).
inline constexpr int max_cpu_number = 4095;

// Datagrams per sendmmsg/recvmmsg call (--batch): the kernel's UIO_MAXIOV (1024) bounds one call's
// iovecs, and 4096 messages of one iovec each is already far past the gain of batching.
inline constexpr std::uint32_t max_batch = 4096;

// The farthest start instant netserve accepts by default (--max-start-lead), and so the longest lead a
// plan may give its instances.
inline constexpr double max_start_lead_s = 30;

}  // namespace nb
