#pragma once
// Batched UDP I/O, the one path every datagram of a test goes through.
// Sending: UDP GSO (one buffer, the kernel cuts it into datagrams) inside sendmmsg, so one system call
// carries up to `batch` datagrams; plain sendmmsg where the kernel has no GSO (core/sys/kernel_features.hpp)
// or refuses it.
// Receiving: recvmmsg with UDP GRO (the kernel hands over coalesced datagrams with their segment size)
// and kernel receive timestamps. Buffers are allocated once; nothing here allocates per datagram.
//
// Errors: send() and receive() run on the data-plane threads, where a failure is an outcome to count or
// report, never an exception: send_outcome and the std::error_code say what happened. The kernel
// features (GSO, GRO, timestamps) are optional: missing or refused, the I/O falls back and mode() says
// which ran.
// set_receive_timeout and set_send_timeout, setup calls, throw fmt::system_error.
#include "core/sys/endpoint.hpp"
#include "core/wire/native/flow.hpp"

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

namespace nb {

// Datagrams of `message_size` bytes one GSO buffer carries (UDP_MAX_SEGMENTS, 64 KiB an IP datagram);
// below 2 a sender has nothing to segment.
std::size_t gso_segments_for(std::size_t message_size) noexcept;

struct send_outcome {
  std::uint64_t sent = 0;     // datagrams the kernel accepted
  std::uint64_t refused = 0;  // datagrams refused with a transient error (ENOBUFS, ECONNREFUSED, ...)
  std::error_code fatal;      // EMSGSIZE and the like: the test cannot go on
};

class udp_batch_sender {
 public:
  // `fd` connected (dest empty) or not (dest given). `message_size` bytes per datagram. On a socket shared
  // by several tests (netserve's port socket), `source` (the address the client talks to) and `tos`
  // (the IP TOS / traffic class byte) go with every message instead of being set on the socket.
  // `format`: the header each datagram carries (core/wire/native/flow.hpp).
  udp_batch_sender(int fd, std::size_t message_size, std::size_t batch, bool try_gso,
                   std::optional<endpoint> dest = std::nullopt, std::optional<endpoint> source = std::nullopt,
                   int tos = -1, payload_format format = payload_format::netload);

  // Sends `count` (<= batch()) datagrams numbered from `first_seq`, stamped with `now_wall_ns`.
  send_outcome send(std::size_t count, std::uint64_t first_seq, std::int64_t now_wall_ns);

  std::size_t batch() const noexcept { return batch_; }
  std::string_view mode() const noexcept { return gso_segments_ > 1 ? "gso" : "sendmmsg"; }

 private:
  void stamp(std::size_t count, std::uint64_t first_seq, std::int64_t now_wall_ns) noexcept;
  std::size_t fill_messages(std::size_t count) noexcept;  // returns mmsghdr count
  std::size_t build_control(msghdr& h, unsigned char* space, std::size_t datagrams) const noexcept;
  void disable_gso() noexcept;

  int fd_;
  std::size_t size_;
  std::size_t batch_;
  std::size_t gso_segments_ = 1;  // datagrams per GSO buffer, 1 = no GSO
  std::optional<endpoint> dest_;
  std::optional<endpoint> source_;
  int tos_;
  payload_format format_;
  std::vector<unsigned char> buffer_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iovs_;
  std::vector<unsigned char> control_;  // per message: UDP_SEGMENT, TOS, PKTINFO as needed
};

// One received buffer: `len` bytes from `source`, `segment` > 0 when GRO coalesced several datagrams of
// that size, `copied` bytes actually in `data` (less than len when a datagram was larger than the buffer).
struct received {
  const sockaddr* source;
  const unsigned char* data;
  std::size_t len;
  std::size_t copied;
  std::size_t segment;
  std::int64_t arrival_ns;  // kernel timestamp, wall clock
};

class udp_batch_receiver {
 public:
  udp_batch_receiver(int fd, std::size_t batch, bool try_gro);

  // Waits up to the socket's receive timeout; calls `visit(const received&)` per buffer.
  // Returns the number of buffers, 0 on timeout; a real error comes back in `ec`.
  template <class Visit>
  std::size_t receive(Visit&& visit, std::error_code& ec);

  std::string_view mode() const noexcept { return gro_ ? "gro" : "recvmmsg"; }

 private:
  std::size_t receive_raw(std::error_code& ec);
  received decode(std::size_t i) const noexcept;

  int fd_;
  bool gro_ = false;
  std::size_t buf_size_;
  std::vector<unsigned char> buffer_;
  std::vector<unsigned char> control_;
  std::vector<sockaddr_storage> names_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iovs_;
};

template <class Visit>
std::size_t udp_batch_receiver::receive(Visit&& visit, std::error_code& ec) {
  std::size_t n = receive_raw(ec);
  for (std::size_t i = 0; i < n; ++i) visit(decode(i));
  return n;
}

// Sets a receive timeout so data-plane loops can notice a stop request. Fails only for a descriptor that
// is no socket: a bug, thrown.
void set_receive_timeout(int fd, std::int64_t ns);
// A blocking send returns after `ns` (EAGAIN), so a sender blocked on a full socket sees its stop token.
void set_send_timeout(int fd, std::int64_t ns);

}  // namespace nb
