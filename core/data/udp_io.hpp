#pragma once
// Batched UDP I/O, the one path every datagram of a test goes through: GSO inside sendmmsg, recvmmsg
// with GRO and kernel timestamps, each optional (mode() says which ran). On the data plane nothing
// allocates per datagram and a failure is an outcome, never an exception.
#include "core/sys/endpoint.hpp"
#include "core/wire/native/flow.hpp"

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

namespace nb {

// Below 2 a sender has nothing to segment.
std::size_t gso_segments_for(std::size_t message_size) noexcept;

struct send_outcome {
  std::uint64_t sent = 0;
  std::uint64_t refused = 0;  // transient: ENOBUFS, ECONNREFUSED
  std::error_code fatal;
};

class udp_batch_sender {
 public:
  // On a socket shared by several tests, `source` and `tos` go with every message, not on the socket.
  udp_batch_sender(int fd, std::size_t message_size, std::size_t batch, bool try_gso,
                   std::optional<endpoint> dest = std::nullopt, std::optional<endpoint> source = std::nullopt,
                   int tos = -1, payload_format format = payload_format::netload);

  send_outcome send(std::size_t count, std::uint64_t first_seq, std::int64_t now_wall_ns);

  std::size_t batch() const noexcept { return batch_; }
  std::string_view mode() const noexcept { return gso_segments_ > 1 ? "gso" : "sendmmsg"; }

 private:
  void stamp(std::size_t count, std::uint64_t first_seq, std::int64_t now_wall_ns) noexcept;
  std::size_t fill_messages(std::size_t count) noexcept;  // mmsghdr count
  std::size_t build_control(msghdr& h, unsigned char* space, std::size_t datagrams) const noexcept;
  void disable_gso() noexcept;

  int fd_;
  std::size_t size_;
  std::size_t batch_;
  std::size_t gso_segments_ = 1;  // 1 = no GSO
  std::optional<endpoint> dest_;
  std::optional<endpoint> source_;
  int tos_;
  payload_format format_;
  std::vector<unsigned char> buffer_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iovs_;
  std::vector<unsigned char> control_;
};

// `segment` > 0: GRO coalesced datagrams of that size; `copied` < len: the buffer was smaller.
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

  // Waits up to the socket's receive timeout; 0 buffers then, a real error in `ec`.
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

// So loops see a stop request.
void set_receive_timeout(int fd, std::int64_t ns);
// So a sender blocked on a full socket sees its stop token.
void set_send_timeout(int fd, std::int64_t ns);

}  // namespace nb
