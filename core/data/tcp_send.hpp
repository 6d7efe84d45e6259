#pragma once
// How a TCP sender hands its message to the kernel.
//
// sendfile (the default): the message lives once in a memory file (memfd), and every send passes
// references to its pages to the socket; the kernel copies nothing from user space. The payload never
// changes, so sharing its pages is safe. On loopback that measured 25 to 46 % above a copying send() at
// 128 KiB and 1 MiB writes (bench/README.md), and iperf3 -Z gains alike: the sender's copy was about a
// quarter of its CPU. Where the receiver's CPU is the limit (the wire-like veth path) it matters less.
// copy: send() from a user buffer, as iperf3 and iperf2 do by default (netload --send-copy).
// zerocopy: send() with MSG_ZEROCOPY (core/data/zerocopy.hpp): pinned user pages, completions to read; the
// kernel copies after all where the receiver is local or the device cannot gather.
#include "core/base/fd.hpp"

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace nb {

enum class tcp_send_call { sendfile, copy, zerocopy };

// One message's bytes and the call that sends them. When sendfile cannot be set up (no memfd_create,
// a socket that takes no pages) it falls back to send() from a buffer, and words() says why.
class tcp_message_source {
 public:
  tcp_message_source(std::size_t message_size, tcp_send_call call);

  // Sends the message's bytes from `offset` to its end on `sock`, once: what send() or sendfile()
  // returned (-1 with errno). `flags` are send()'s (MSG_ZEROCOPY); MSG_NOSIGNAL is implied: sendfile
  // has no flags, so the calling thread blocks SIGPIPE while it sends (a hung-up peer is EPIPE).
  // A call waits for room in the socket at most its SO_SNDTIMEO, by either call (then -1, EAGAIN, or the
  // bytes it sent): sendfile makes a blocking socket non-blocking at its first call and waits in poll().
  ssize_t send(int sock, std::size_t offset, int flags) noexcept;

  bool uses_sendfile() const noexcept { return static_cast<bool>(file_); }
  std::size_t size() const noexcept { return size_; }
  // For the result's batching: "sendfile", "send", or "send (sendfile: WHY)".
  const std::string& words() const noexcept { return words_; }

 private:
  void fall_back(std::string why);
  void make_nonblocking(int sock) noexcept;
  void make_blocking_again(int sock) noexcept;

  std::size_t size_;
  fd_handle file_;      // the memory file sendfile reads, when sendfile is in use
  std::string buffer_;  // send()'s source otherwise
  std::string words_;
  int prepared_ = -1;              // the socket make_nonblocking() last looked at
  bool made_nonblocking_ = false;  // it was blocking, and sendfile made it non-blocking
  int wait_ms_ = -1;               // its SO_SNDTIMEO: the longest wait for room in poll(), -1 none
};

// Blocks SIGPIPE in the calling thread for the rest of its life: the sender threads' EPIPE is an error
// they report, never a signal that ends the whole program (sendfile cannot say MSG_NOSIGNAL).
void block_sigpipe_in_this_thread() noexcept;

}  // namespace nb
