#pragma once
// The user's stop (SIGINT, SIGTERM), for one test or --bidir's two. A stop is absolute: no traffic starts
// after it. The first signal asks the tests to stop; those whose traffic has begun end it, finish the end
// exchange and keep their figures; if any had not begun, or the exchange takes longer than the grace, or
// a second signal comes, the io_context stops and the tests are abandoned (their destructors stop and
// join the data threads).
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
  // `interrupt` is called once, with the signal's name; false: some test could not stop gracefully.
  user_stop(asio::io_context& io, std::function<bool(const std::string&)> interrupt);
  // The result of a test abandoned before it completed: failed, and marked interrupted when a signal
  // did it (nothing was sent after the signal; what was sent before is not known to this side).
  test_result abandoned_result(const client_options& o) const;
  // A stop caught elsewhere before this one was in place: the test ends before it starts.
  test_result before_start(const client_options& o, int signal) const;

 private:
  void wait();

  asio::io_context& io_;
  asio::signal_set signals_;
  asio::steady_timer grace_;
  std::function<bool(const std::string&)> interrupt_;
  int signal_ = 0;
  bool before_start_ = false;  // the stop came before any test's traffic began
};

// The same stop for a client that waits in poll() rather than on an io_context (netload --peer netserver):
// SIGINT and SIGTERM are blocked from construction on, in this thread and the threads it starts later,
// and read from a signalfd that each of the client's waits polls beside its socket. A first signal
// before begin() or a second one abandons the test (take() throws stop_abandoned); a first one after it
// starts the grace, the bound of the end exchange (deadline_mono_ns()).
struct stop_abandoned : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class polled_stop {
 public:
  polled_stop();
  // Reads what came meanwhile, then restores the signal mask: those signals were this test's.
  ~polled_stop();
  polled_stop(const polled_stop&) = delete;
  polled_stop& operator=(const polled_stop&) = delete;

  int fd() const noexcept { return fd_; }
  // The traffic is about to begin: a stop from now on ends it and keeps its figures.
  void begin() noexcept { begun_ = true; }
  // Takes the signals waiting on fd(): true when the first has come now (the caller stops its traffic).
  bool take();
  bool stopped() const noexcept { return signal_ != 0; }
  std::string signal() const;
  std::int64_t stop_wall_ns() const noexcept { return stop_wall_ns_; }
  // The monotonic instant by which the end exchange must be over: the stop's grace, or never.
  std::int64_t deadline_mono_ns() const noexcept { return deadline_mono_ns_; }
  // The grace has passed: says so and throws stop_abandoned.
  [[noreturn]] void grace_over() const;
  test_result abandoned_result(const client_options& o) const;

 private:
  int fd_ = -1;
  int signal_ = 0;
  bool begun_ = false;
  std::int64_t stop_wall_ns_ = 0;
  std::int64_t deadline_mono_ns_;
  sigset_t old_mask_{};  // what to restore
};

// The exit status of a test the user stopped: 128 + the signal's number, as a shell reports it.
int interrupted_status(const std::string& signal_name);

}  // namespace nb::load
