#pragma once
// How a TCP sender hands its message to the kernel: by default sendfile() from a memory file, which
// saves the sender's copy (bench/README.md#tcp-sendfile); the payload never changes, so sharing its pages
// is safe.
#include "core/base/fd.hpp"

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace nb {

enum class tcp_send_call { sendfile, copy, zerocopy };

// How much of a message one sendfile() call asks for.
enum class tcp_sendfile_piece { whole_message, one_pipe };

// Falls back to send() from a buffer where sendfile cannot be set up; words() says why.
class tcp_message_source {
 public:
  tcp_message_source(std::size_t message_size, tcp_send_call call,
                     tcp_sendfile_piece piece = tcp_sendfile_piece::whole_message);

  // From `offset` to the message's end, once; -1 with errno. Waits for room at most SO_SNDTIMEO, by
  // either call. MSG_NOSIGNAL is implied (block_sigpipe_in_this_thread).
  ssize_t send(int sock, std::size_t offset, int flags) noexcept;

  bool uses_sendfile() const noexcept { return static_cast<bool>(file_); }
  std::size_t size() const noexcept { return size_; }
  const std::string& words() const noexcept { return words_; }

 private:
  std::size_t sendfile_count(std::size_t offset) const noexcept;
  void fall_back(std::string why);
  void make_nonblocking(int sock) noexcept;
  void make_blocking_again(int sock) noexcept;

  std::size_t size_;
  std::size_t piece_;  // at most this many bytes per sendfile() call
  fd_handle file_;     // empty without sendfile
  std::string buffer_;
  std::string words_;
  int prepared_ = -1;  // the socket make_nonblocking() last looked at
  bool made_nonblocking_ = false;
  int wait_ms_ = -1;  // its SO_SNDTIMEO; -1 none
};

// A longer sendfile() sends its pipe-fulls (16 pages) MSG_MORE but the last: under bbr, which may pace inside
// TCP, that costs pacing timers, elsewhere it is the faster way (bench/README.md#tcp-sendfile).
tcp_sendfile_piece sendfile_piece_for(const std::string& congestion);
std::size_t sendfile_pipe_bytes() noexcept;

// sendfile cannot say MSG_NOSIGNAL, and a sender's EPIPE must not end the whole program.
void block_sigpipe_in_this_thread() noexcept;

}  // namespace nb
