#pragma once
// The data-plane loops: one thread per stream, raw system calls, counters published per batch.
// Each loop is bounded: it waits for its start instant, runs for its duration and stops by itself,
// or earlier when its stop_token is triggered.
#include "core/endpoint.hpp"
#include "core/flow.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

namespace nb {

struct stream_plan {
  int fd = -1;                       // connected socket (or unconnected UDP with `dest`), not owned
  std::optional<endpoint> dest;      // UDP only, for an unconnected socket
  std::optional<endpoint> source;    // UDP on a shared socket: the local address to send from
  int tos = -1;                      // UDP on a shared socket: TOS / traffic class per datagram
  std::size_t message_size = 0;
  double pps = 0;                    // this stream's datagrams (TCP: sends) per second, 0 = unlimited
  std::int64_t start_wall_ns = 0;    // the agreed start instant (wall clock)
  std::int64_t duration_ns = 0;
  std::size_t batch = 256;           // datagrams per system call at most
  bool gso = true;
  int cpu = -1;                      // pin to this CPU when >= 0
};

// How a stream's loop ran, written by its thread and read once it has ended. Every loop, sending or
// receiving, reports its failure here, once, as the line a user reads.
struct stream_outcome {
  std::int64_t start_wall_ns = 0;    // sender: when the first datagram actually went
  std::int64_t elapsed_ns = 0;       // sender: monotonic, first send to the end of the last
  std::string batching;              // "gso", "sendmmsg", "send"; receiving: "gro", "recvmmsg", "recv"
  std::string error;                 // empty when the stream ran to its end
};

// Datagrams per system call for a message size: about 1 MiB of payload per batch, at most 1024, so a
// stream's buffer stays around 1 MiB whatever the size.
inline std::size_t default_batch(std::size_t message_size) {
  return std::clamp<std::size_t>((1u << 20) / std::max<std::size_t>(message_size, 1), 1, 1024);
}

// What a TCP receiver reads into, per stream (netserve counts it against its memory budget).
inline constexpr std::size_t tcp_receive_buffer_bytes = 1u << 20;

// Sends datagrams until the duration ends; fails the stream on EMSGSIZE naming the path MTU.
void run_udp_sender(std::stop_token stop, const stream_plan& plan, send_counters& counters, stream_outcome& out);
// Writes `message_size` bytes per send() until the duration ends, then shuts the write side down so the
// receiver sees EOF only after every byte.
void run_tcp_sender(std::stop_token stop, const stream_plan& plan, send_counters& counters, stream_outcome& out);
// Reads until EOF (the sender's end), an error, or a stop request. Counts bytes only: messages are
// counted from the bytes of all streams (tcp_messages).
void run_tcp_receiver(std::stop_token stop, int fd, recv_counters& counters, stream_outcome& out);
// Receives datagrams of one flow on a connected UDP socket until stopped (reverse mode, client side).
void run_udp_receiver(std::stop_token stop, int fd, bool gro, recv_counters& counters, stream_outcome& out);

}  // namespace nb
