#pragma once
// The data-plane loops: one thread per stream, raw system calls, counters published per batch, each
// bounded by its duration and its stop_token.
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
  int fd = -1;  // not owned
  std::optional<endpoint> dest;
  std::optional<endpoint> source;  // a shared UDP socket's, per datagram
  int tos = -1;
  payload_format payload = payload_format::netload;
  std::size_t message_size = 0;
  double pps = 0;  // TCP: sends; 0 = unlimited
  std::int64_t start_wall_ns = 0;
  std::int64_t duration_ns = 0;
  std::size_t batch = 256;
  bool gso = true;
  bool gro = true;
  int cpu = -1;
  std::size_t recv_size = 0;  // 0 = tcp_default_recv_size()
  bool recv_copy = false;     // else the kernel discards them
  tcp_send_call send_call = tcp_send_call::sendfile;
  std::size_t response_size = 0;
  std::uint32_t burst = 0;
};

// Read once the stream's thread has ended.
struct stream_outcome {
  std::int64_t start_wall_ns = 0;  // sender: when the first datagram went
  std::int64_t elapsed_ns = 0;     // monotonic
  std::string batching;
  zerocopy_counts zerocopy;
  std::string error;
  std::optional<tcp_sample> tcp_end{};  // just before the sender shut its side down
};

// Start and end count from when the thread actually woke: a late one sends its whole duration.
void begin_stream(const std::stop_token& stop, const stream_plan& plan, stream_outcome& out, std::int64_t& start_mono,
                  std::int64_t& end_mono);

// About 1 MiB of payload per call.
inline std::size_t default_batch(std::size_t message_size) {
  return std::clamp<std::size_t>((1u << 20) / std::max<std::size_t>(message_size, 1), 1, 1024);
}

// Segments wait unacknowledged while a recv() holds the socket: bbr's small window wants short reads,
// a loss-based one's large window fewer, longer ones (bench/README.md#tcp-recv-size).
inline constexpr std::size_t tcp_recv_size_bbr = 64u << 10;
inline constexpr std::size_t tcp_recv_size_other = 256u << 10;
std::size_t tcp_default_recv_size(const std::string& congestion);
// netserve's memory budget charges it per stream.
inline constexpr std::size_t tcp_max_default_recv_size = std::max(tcp_recv_size_bbr, tcp_recv_size_other);

// Fails the stream on EMSGSIZE naming the path MTU.
void run_udp_sender(std::stop_token stop, const stream_plan& plan, send_counters& counters, stream_outcome& out);
// Shuts the write side down at the end, so the receiver's EOF comes after every byte.
void run_tcp_sender(std::stop_token stop, const stream_plan& plan, send_counters& counters, stream_outcome& out);
// Counts bytes only (tcp_messages).
void run_tcp_receiver(std::stop_token stop, const stream_plan& plan, recv_counters& counters, stream_outcome& out);
// Reverse mode, client side.
void run_udp_receiver(std::stop_token stop, int fd, bool gro, recv_counters& counters, stream_outcome& out);

// Its thread is the only writer; the outcome is read once `done` is set.
struct data_stream {
  fd_handle fd;  // empty on a shared socket
  send_counters sent;
  recv_counters received;
  rr_counters rr;
  std::unique_ptr<latency_histogram> latency;
  stream_outcome outcome;
  std::uint32_t drops_at_start = 0;  // the kernel's drop counter then
  std::atomic<int> pinned_cpu{-1};
  std::atomic<bool> done{false};
  std::jthread thread;
};

// Every stream of a side sends, or every one receives.
class stream_set {
 public:
  // netserve's forward UDP counts at its port's receive lanes, not the stream's counters.
  using received_of = std::function<flow_totals(std::size_t stream)>;

  stream_set(std::size_t streams, bool sending, test_kind kind, std::uint64_t message_size);
  ~stream_set() { stop(); }
  stream_set(const stream_set&) = delete;
  stream_set& operator=(const stream_set&) = delete;

  std::size_t size() const noexcept { return streams_.size(); }
  data_stream& operator[](std::size_t s) noexcept { return streams_[s]; }
  const data_stream& operator[](std::size_t s) const noexcept { return streams_[s]; }
  bool sending() const noexcept { return sending_; }

  void start(std::size_t s, const stream_plan& plan);
  bool all_done() const noexcept;
  // Threads end within a poll interval.
  void request_stop() noexcept;
  void stop();

  void totals(std::uint64_t& packets, std::uint64_t& bytes, const received_of& received = {}) const;
  flow_totals stream_received(std::size_t s, const received_of& received = {}) const {
    return received_by(s, received);
  }
  // Once the threads have ended.
  side_counts counts(const received_of& received = {}) const;
  // Now, and as each sender ended.
  std::vector<tcp_sample> tcp_samples() const;
  std::vector<tcp_sample> tcp_end_samples() const;
  std::string congestion() const;
  // Safe while they run: single-writer relaxed atomics.
  latency_histogram latency() const;

 private:
  flow_totals received_by(std::size_t s, const received_of& received) const;

  std::vector<data_stream> streams_;
  bool sending_;
  test_kind kind_;
  std::uint64_t message_size_;
};

}  // namespace nb
