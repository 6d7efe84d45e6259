#pragma once
// The data-plane loops: one thread per stream, raw system calls, counters published per batch.
// Each loop is bounded: it waits for its start instant, runs for its duration and stops by itself,
// or earlier when its stop_token is triggered. And one side's streams of a test (stream_set), which
// netload and netserve hold, start and count the same way.
#include "core/data/rr.hpp"
#include "core/data/tcp_send.hpp"
#include "core/data/zerocopy.hpp"
#include "core/result/latency_histogram.hpp"
#include "core/sys/endpoint.hpp"
#include "core/sys/socket.hpp"
#include "core/sys/tcp_info.hpp"
#include "core/wire/native/flow.hpp"
#include "core/wire/native/protocol.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace nb {

struct stream_plan {
  int fd = -1;                                       // connected socket (or unconnected UDP with `dest`), not owned
  std::optional<endpoint> dest;                      // UDP only, for an unconnected socket
  std::optional<endpoint> source;                    // UDP on a shared socket: the local address to send from
  int tos = -1;                                      // UDP on a shared socket: TOS / traffic class per datagram
  payload_format payload = payload_format::netload;  // sending UDP: the header its datagrams carry
  std::size_t message_size = 0;
  double pps = 0;                  // this stream's datagrams (TCP: sends) per second, 0 = unlimited
  std::int64_t start_wall_ns = 0;  // the agreed start instant (wall clock)
  std::int64_t duration_ns = 0;
  std::size_t batch = 256;  // datagrams per system call at most
  bool gso = true;
  bool gro = true;            // receiving UDP: ask the socket for coalesced buffers
  int cpu = -1;               // pin to this CPU when >= 0
  std::size_t recv_size = 0;  // receiving TCP: bytes per recv(), 0 = tcp_default_recv_size()
  bool recv_copy = false;     // receiving TCP: copy the bytes out (else the kernel discards them)
  tcp_send_call send_call = tcp_send_call::sendfile;  // sending TCP (core/data/tcp_send.hpp)
  std::size_t response_size = 0;  // request/response: the answer's bytes (message_size: the request's)
  std::uint32_t burst = 0;        // request/response: transactions in flight beyond the first
};

// How a stream's loop ran, written by its thread and read once it has ended. Every loop, sending or
// receiving, reports its failure here, once, as the line a user reads.
struct stream_outcome {
  std::int64_t start_wall_ns = 0;       // sender: when the first datagram actually went
  std::int64_t elapsed_ns = 0;          // sender: monotonic, first send to the end of the last
  std::string batching;                 // "gso", "sendmmsg", "sendfile", "send"; receiving: "gro", "recvmmsg", "recv",
                                        // UDP with the kernel's qualifiers (core/sys/kernel_features.hpp)
  zerocopy_counts zerocopy;             // a TCP sender's MSG_ZEROCOPY sends, and what the kernel did with them
  std::string error;                    // empty when the stream ran to its end
  std::optional<tcp_sample> tcp_end{};  // TCP sender: its connection just before it shut its side down
};

// Waits for the plan's start instant (looking at the stop token), then fixes the stream's monotonic start
// and end from the moment its thread actually woke, and records that wall-clock start in `out`.
void begin_stream(const std::stop_token& stop, const stream_plan& plan, stream_outcome& out, std::int64_t& start_mono,
                  std::int64_t& end_mono);

// Datagrams per system call for a message size: about 1 MiB of payload per batch, at most 1024, so a
// stream's buffer stays around 1 MiB whatever the size.
inline std::size_t default_batch(std::size_t message_size) {
  return std::clamp<std::size_t>((1u << 20) / std::max<std::size_t>(message_size, 1), 1, 1024);
}

// What a TCP receiver reads per recv() unless told, by the congestion control of its socket ("bbr",
// "cubic"...). While a recv() copies, arriving segments wait in the socket's backlog, unacknowledged. bbr
// keeps its window near the path's bandwidth-delay product, which on loopback or a LAN is a few segments:
// a long copy starves the sender, and 64 KiB reads measured best (1 MiB writes on loopback: 43 Gbit/s
// against 29 with 128 KiB and 25 with 256 KiB reads). A loss-based algorithm (cubic, reno) keeps a large
// window, and fewer, larger reads did better: 256 KiB (128 KiB writes: 21 Gbit/s against 17 with 64 KiB).
// Those sizes were measured with receivers that copied; a discarding receiver (the default since 0.7.0)
// still holds the socket while it walks the queue, only shorter, and was not measured for its own best size.
inline constexpr std::size_t tcp_recv_size_bbr = 64u << 10;
inline constexpr std::size_t tcp_recv_size_other = 256u << 10;
std::size_t tcp_default_recv_size(const std::string& congestion);
// The most a TCP receiver holds per stream without a size asked (netserve's memory budget charges it).
inline constexpr std::size_t tcp_max_default_recv_size = std::max(tcp_recv_size_bbr, tcp_recv_size_other);

// Sends datagrams until the duration ends; fails the stream on EMSGSIZE naming the path MTU.
void run_udp_sender(std::stop_token stop, const stream_plan& plan, send_counters& counters, stream_outcome& out);
// Writes `message_size` bytes per send() until the duration ends, then shuts the write side down so the
// receiver sees EOF only after every byte.
void run_tcp_sender(std::stop_token stop, const stream_plan& plan, send_counters& counters, stream_outcome& out);
// Reads plan.recv_size bytes per recv() on plan.fd until EOF (the sender's end), an error, or a stop
// request. Counts bytes only: messages are counted from the bytes of all streams (tcp_messages).
void run_tcp_receiver(std::stop_token stop, const stream_plan& plan, recv_counters& counters, stream_outcome& out);
// Receives datagrams of one flow on a connected UDP socket until stopped (reverse mode, client side).
void run_udp_receiver(std::stop_token stop, int fd, bool gro, recv_counters& counters, stream_outcome& out);

// One data stream of a test, on either side: its socket, what its thread counts, and how it ended. The
// thread is the only writer of the counters and the outcome; the control plane reads the counters while
// it runs, and the outcome once `done` is set.
struct data_stream {
  fd_handle fd;                                // empty where the stream uses a shared socket (netserve's UDP port)
  send_counters sent;                          // a sending stream's
  recv_counters received;                      // a receiving stream's; a request/response client's answers
  rr_counters rr;                              // a request/response client's timeouts, late and unmatched answers
  std::unique_ptr<latency_histogram> latency;  // a request/response client's round trips
  stream_outcome outcome;
  std::uint32_t drops_at_start = 0;  // receiving UDP on its own socket: the kernel's drop counter then
  std::atomic<int> pinned_cpu{-1};   // the CPU its thread was pinned to as the plan asked; -1: not pinned
  std::atomic<bool> done{false};     // its thread has ended
  std::jthread thread;
};

// One side's streams of a test, held and counted the same way by netload and netserve: every stream of
// a side sends, or every one receives.
class stream_set {
 public:
  // Where a receiving stream's counts come from when not its own counters (netserve's forward UDP: the
  // port's receive lanes, summed).
  using received_of = std::function<flow_totals(std::size_t stream)>;

  stream_set(std::size_t streams, bool sending, test_kind kind, std::uint64_t message_size);
  ~stream_set() { stop(); }
  stream_set(const stream_set&) = delete;
  stream_set& operator=(const stream_set&) = delete;

  std::size_t size() const noexcept { return streams_.size(); }
  data_stream& operator[](std::size_t s) noexcept { return streams_[s]; }
  const data_stream& operator[](std::size_t s) const noexcept { return streams_[s]; }
  bool sending() const noexcept { return sending_; }

  // Starts stream `s`'s thread: it sends by `plan`, or receives on plan.fd (pinned to plan.cpu, with
  // plan.gro), until its duration ends, its sender's EOF, or stop().
  void start(std::size_t s, const stream_plan& plan);
  bool all_done() const noexcept;
  // Asks every thread to stop; they end within a poll interval (every loop polls its stop token).
  void request_stop() noexcept;
  // request_stop(), then joins them.
  void stop();

  // Packets and bytes so far, summed over the streams; TCP counts messages from the bytes of all streams.
  void totals(std::uint64_t& packets, std::uint64_t& bytes, const received_of& received = {}) const;
  // One stream's receive counts (its own counters, or `received`'s), for a peer that wants them per stream.
  flow_totals stream_received(std::size_t s, const received_of& received = {}) const {
    return received_by(s, received);
  }
  // This side's counts once its threads have ended: the totals, a sender's refusals, first start and
  // longest sending time, a receiver's arrival window, sequence analysis and (own UDP sockets) kernel
  // drops, the batching used, and the first error of any stream.
  side_counts counts(const received_of& received = {}) const;
  // TCP: each stream's connection now (TCP_INFO), and as its sender ended (sending streams only); a
  // stream without a socket gives an empty sample. netload and netserve sample their senders alike.
  std::vector<tcp_sample> tcp_samples() const;
  std::vector<tcp_sample> tcp_end_samples() const;
  // The congestion control of the first stream's connection; "" unknown.
  std::string congestion() const;
  // Request/response client: every stream's round trips so far, merged (read while they run: the
  // histograms' counters are single-writer relaxed atomics).
  latency_histogram latency() const;

 private:
  flow_totals received_by(std::size_t s, const received_of& received) const;

  std::vector<data_stream> streams_;
  bool sending_;
  test_kind kind_;
  std::uint64_t message_size_;
};

}  // namespace nb
