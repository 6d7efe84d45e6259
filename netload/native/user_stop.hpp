#pragma once
// The user's stop (SIGINT, SIGTERM) for one test or --bidir's two (docs/netload-user-stop.md).
#include "core/result/result.hpp"
#include "netload/cli/cli.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csignal>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace nb::load {

namespace asio = boost::asio;

class user_stop {
 public:
  // `interrupt` gets the signal's name, once; false: a test must be abandoned.
  user_stop(asio::io_context& io, std::function<bool(const std::string&)> interrupt);
  // Failed, and marked interrupted when a signal did it.
  test_result abandoned_result(const client_options& o) const;
  test_result before_start(const client_options& o, int signal) const;

 private:
  void wait();

  asio::io_context& io_;
  asio::signal_set signals_;
  asio::steady_timer grace_;
  std::function<bool(const std::string&)> interrupt_;
  int signal_ = 0;
  bool before_start_ = false;  // before any test's traffic began
};

// For a client that waits in poll(): the signals are blocked from construction on, also in threads
// started later, and read from fd().
struct stop_abandoned : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class polled_stop {
 public:
  polled_stop();
  // Reads what came before restoring the mask: those signals were this test's.
  ~polled_stop();
  polled_stop(const polled_stop&) = delete;
  polled_stop& operator=(const polled_stop&) = delete;

  int fd() const noexcept { return fd_; }
  // From now on a stop keeps the figures; before, it abandons the test.
  void begin() noexcept { begun_ = true; }
  // True when the first signal came now; throws stop_abandoned before begin() or on a second.
  bool take();
  bool stopped() const noexcept { return signal_ != 0; }
  std::string signal() const;
  std::int64_t stop_wall_ns() const noexcept { return stop_wall_ns_; }
  // Monotonic; the stop's grace, or never.
  std::int64_t deadline_mono_ns() const noexcept { return deadline_mono_ns_; }
  [[noreturn]] void grace_over() const;
  test_result abandoned_result(const client_options& o) const;

 private:
  int fd_ = -1;
  int signal_ = 0;
  bool begun_ = false;
  std::int64_t stop_wall_ns_ = 0;
  std::int64_t deadline_mono_ns_;
  sigset_t old_mask_{};
};

// 128 + the signal's number, as a shell reports it.
int interrupted_status(const std::string& signal_name);

}  // namespace nb::load
