#pragma once
// The user's stop (SIGINT, SIGTERM), for one test or --bidir's two. A stop is absolute: no traffic starts
// after it. The first signal asks the tests to stop; those whose traffic has begun end it, finish the end
// exchange and keep their figures; if any had not begun, or the exchange takes longer than the grace, or
// a second signal comes, the io_context stops and the tests are abandoned (their destructors stop and
// join the data threads).
#include "core/result.hpp"
#include "netload/cli.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
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

 private:
  void wait();

  asio::io_context& io_;
  asio::signal_set signals_;
  asio::steady_timer grace_;
  std::function<bool(const std::string&)> interrupt_;
  int signal_ = 0;
  bool before_start_ = false;  // the stop came before any test's traffic began
};

// The exit status of a test the user stopped: 128 + the signal's number, as a shell reports it.
int interrupted_status(const std::string& signal_name);

}  // namespace nb::load
