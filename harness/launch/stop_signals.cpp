#include "harness/launch/stop_signals.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace harness {

stop_signals::stop_signals(boost::asio::io_context& io, std::string what, std::function<void(int sig)> on_stop)
    : set_(io, SIGINT, SIGTERM, SIGHUP), what_(std::move(what)), on_stop_(std::move(on_stop)) {
  arm();
}

void stop_signals::close() {
  boost::system::error_code ignored;
  set_.cancel(ignored);
}

void stop_signals::arm() {
  set_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) quiet_lost_terminal();
    if (!what_.empty())
      fmt::print(stderr, "harness: signal {} ({}): {}\n", sig, strsignal(sig),
                 signalled_ ? fmt::format("killing every {}", what_)
                            : fmt::format("stopping every {} (again to kill them at once)", what_));
    signalled_ = true;
    on_stop_(sig);
    arm();
  });
}

void quiet_lost_terminal() {
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd < 0) return;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO})
    if (::isatty(fd)) ::dup2(null_fd, fd);
  ::close(null_fd);
}

}  // namespace harness
