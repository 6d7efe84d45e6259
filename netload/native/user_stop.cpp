#include "netload/native/user_stop.hpp"

#include "core/base/clock.hpp"
#include "netload/native/client.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <limits>
#include <system_error>

#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace nb::load {

using namespace std::chrono_literals;

namespace {

// Under the harness's 5 s from its stop to SIGKILL, so the figures reach it.
constexpr auto stop_grace = 3s;

std::string signal_name(int sig) {
  return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : fmt::format("signal {}", sig);
}

// What was sent before the signal is not known to this side.
test_result abandoned(const client_options& o, int signal, bool before_start) {
  if (!signal) return failed_result(o, "the test did not complete");
  test_result r = failed_result(
      o, before_start ? fmt::format("interrupted by {} before the start instant: nothing was sent", signal_name(signal))
                      : fmt::format("interrupted by {}; the test's figures were not exchanged in time; nothing was "
                                    "sent after the signal",
                                    signal_name(signal)));
  r.interrupted = interruption{signal_name(signal), 0, o.duration_s};
  return r;
}

}  // namespace

user_stop::user_stop(asio::io_context& io, std::function<bool(const std::string&)> interrupt)
    : io_(io), signals_(io, SIGINT, SIGTERM), grace_(io), interrupt_(std::move(interrupt)) {
  wait();
}

void user_stop::wait() {
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (signal_) {  // the second
      fmt::print(stderr, "netload: {} again: abandoning the test\n", signal_name(sig));
      io_.stop();
      return;
    }
    signal_ = sig;
    if (!interrupt_(signal_name(sig))) {
      before_start_ = true;
      io_.stop();
      return;
    }
    fmt::print(stderr, "netload: {}: stopping; collecting what was measured (again to abandon it)\n", signal_name(sig));
    grace_.expires_after(stop_grace);
    grace_.async_wait([this](const boost::system::error_code& e) {
      if (e) return;
      fmt::print(stderr, "netload: the end of the test was not exchanged within {} s of the stop: abandoned\n",
                 stop_grace.count());
      io_.stop();
    });
    wait();
  });
}

test_result user_stop::abandoned_result(const client_options& o) const { return abandoned(o, signal_, before_start_); }

test_result user_stop::before_start(const client_options& o, int signal) const { return abandoned(o, signal, true); }

polled_stop::polled_stop() : deadline_mono_ns_(std::numeric_limits<std::int64_t>::max()) {
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  // Blocked, it reaches the signalfd even where ignored (a background job's SIGINT).
  if (const int e = ::pthread_sigmask(SIG_BLOCK, &stops, &old_mask_))
    throw std::system_error(e, std::generic_category(), "blocking SIGINT");
  fd_ = ::signalfd(-1, &stops, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd_ < 0) {
    const int e = errno;
    ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    throw std::system_error(e, std::generic_category(), "signalfd");
  }
}

polled_stop::~polled_stop() {
  signalfd_siginfo info{};
  while (::read(fd_, &info, sizeof info) == sizeof info) {
  }
  ::close(fd_);
  ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

bool polled_stop::take() {
  bool first_now = false;
  signalfd_siginfo info{};
  while (::read(fd_, &info, sizeof info) == sizeof info) {
    const int sig = static_cast<int>(info.ssi_signo);
    if (signal_) {
      fmt::print(stderr, "netload: {} again: abandoning the test\n", signal_name(sig));
      throw stop_abandoned("a second signal");
    }
    signal_ = sig;
    stop_wall_ns_ = wall_ns();
    if (!begun_) throw stop_abandoned("a signal before the start");
    fmt::print(stderr, "netload: {}: stopping; collecting what was measured (again to abandon it)\n", signal_name(sig));
    deadline_mono_ns_ = mono_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(stop_grace).count();
    first_now = true;
  }
  return first_now;
}

std::string polled_stop::signal() const { return signal_ ? signal_name(signal_) : std::string(); }

void polled_stop::grace_over() const {
  fmt::print(stderr, "netload: the end of the test was not exchanged within {} s of the stop: abandoned\n",
             stop_grace.count());
  throw stop_abandoned("the grace passed");
}

test_result polled_stop::abandoned_result(const client_options& o) const { return abandoned(o, signal_, !begun_); }

int interrupted_status(const std::string& signal_name) { return 128 + (signal_name == "SIGTERM" ? SIGTERM : SIGINT); }

}  // namespace nb::load
