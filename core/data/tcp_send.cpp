#include "core/data/tcp_send.hpp"

#include "core/base/units.hpp"
#include "core/sys/eintr.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <pthread.h>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace nb {

namespace {

constexpr char payload_byte = 0x5a;

fd_handle payload_file(std::size_t size, std::string& why) {
  fd_handle f(::memfd_create("netbench-payload", MFD_CLOEXEC));
  if (!f) {
    why = fmt::format("memfd_create: {}", std::strerror(errno));
    return {};
  }
  const std::string chunk(std::min<std::size_t>(size, 1u << 16), payload_byte);
  for (std::size_t done = 0; done < size;) {
    const ssize_t w = retry_eintr(
        [&] { return ::pwrite(f.get(), chunk.data(), std::min(chunk.size(), size - done), static_cast<off_t>(done)); });
    if (w <= 0) {
      why = fmt::format("writing the payload file: {}", w < 0 ? std::strerror(errno) : "no progress");
      return {};
    }
    done += static_cast<std::size_t>(w);
  }
  return f;
}

}  // namespace

tcp_message_source::tcp_message_source(std::size_t message_size, tcp_send_call call, tcp_sendfile_piece piece)
    : size_(std::max<std::size_t>(message_size, 1)),
      piece_(piece == tcp_sendfile_piece::one_pipe ? sendfile_pipe_bytes() : size_) {
  if (call != tcp_send_call::sendfile) {
    fall_back("");
    return;
  }
  std::string why;
  file_ = payload_file(size_, why);
  if (!file_) fall_back(why);
  else if (piece_ < size_) words_ = fmt::format("sendfile, {} per call", format_size(piece_));
  else words_ = "sendfile";
}

tcp_sendfile_piece sendfile_piece_for(const std::string& congestion) {
  return congestion == "bbr" ? tcp_sendfile_piece::one_pipe : tcp_sendfile_piece::whole_message;
}

std::size_t sendfile_pipe_bytes() noexcept { return 16 * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// Ends on a piece boundary: a resumed piece still fits the pipe, and is not corked.
std::size_t tcp_message_source::sendfile_count(std::size_t offset) const noexcept {
  return std::min(size_ - offset, piece_ - offset % piece_);
}

void tcp_message_source::fall_back(std::string why) {
  file_.reset();
  buffer_.assign(size_, payload_byte);
  words_ = why.empty() ? "send" : fmt::format("send (sendfile: {})", why);
}

// A blocking sendfile() restarts SO_SNDTIMEO for every 64 KiB: on a slow path one call outlasts the
// test, deaf to its stop token. So it runs non-blocking and waits for room in poll(). Once per socket.
void tcp_message_source::make_nonblocking(int sock) noexcept {
  if (sock == prepared_) return;
  prepared_ = sock;
  made_nonblocking_ = false;
  timeval t{};
  socklen_t len = sizeof t;
  wait_ms_ = ::getsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &t, &len) == 0 && (t.tv_sec > 0 || t.tv_usec > 0)
                 ? static_cast<int>(std::min<long>(t.tv_sec, 1'000'000) * 1000 + (t.tv_usec + 999) / 1000)
                 : -1;
  const int flags = ::fcntl(sock, F_GETFL);
  // A socket the caller made non-blocking keeps its own meaning: EAGAIN at once.
  made_nonblocking_ = flags >= 0 && !(flags & O_NONBLOCK) && ::fcntl(sock, F_SETFL, flags | O_NONBLOCK) == 0;
}

void tcp_message_source::make_blocking_again(int sock) noexcept {
  if (sock != prepared_ || !made_nonblocking_) return;
  if (const int flags = ::fcntl(sock, F_GETFL); flags >= 0) ::fcntl(sock, F_SETFL, flags & ~O_NONBLOCK);
  made_nonblocking_ = false;
}

ssize_t tcp_message_source::send(int sock, std::size_t offset, int flags) noexcept {
  if (file_) {
    make_nonblocking(sock);
    off_t from = static_cast<off_t>(offset);
    const ssize_t r = ::sendfile(sock, file_.get(), &from, sendfile_count(offset));
    // A socket that cannot take pages says so at the first send.
    if (r < 0 && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) && offset == 0) {
      const int e = errno;
      make_blocking_again(sock);
      fall_back(std::strerror(e));
    } else {
      if (r < 0 && errno == EAGAIN && made_nonblocking_) {
        pollfd p{sock, POLLOUT, 0};
        ::poll(&p, 1, wait_ms_);  // an error: the next call reports it
        errno = EAGAIN;
      }
      return r;
    }
  }
  return ::send(sock, buffer_.data() + offset, size_ - offset, flags | MSG_NOSIGNAL);
}

void block_sigpipe_in_this_thread() noexcept {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
}

}  // namespace nb
