#include "netload/user_stop.hpp"

#include "netload/client.hpp"

#include <fmt/format.h>

#include <csignal>

namespace nb::load {

using namespace std::chrono_literals;

namespace {

// The end exchange after a stop: netserve drains (at most 2 s by default) and answers. Shorter than the
// harness's 5 s between its stop and SIGKILL, so a stopped instance's figures reach the harness.
constexpr auto stop_grace = 3s;

std::string signal_name(int sig) { return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : fmt::format("signal {}", sig); }

}  // namespace

user_stop::user_stop(asio::io_context& io, std::function<bool(const std::string&)> interrupt)
    : io_(io), signals_(io, SIGINT, SIGTERM), grace_(io), interrupt_(std::move(interrupt)) {
  wait();
}

void user_stop::wait() {
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (signal_) {  // the second: no more waiting
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

test_result user_stop::abandoned_result(const client_options& o) const {
  if (!signal_) return failed_result(o, "the test did not complete");
  test_result r = failed_result(
      o, before_start_ ? fmt::format("interrupted by {} before the start instant: nothing was sent", signal_name(signal_))
                       : fmt::format("interrupted by {}; the test's figures were not exchanged in time; nothing was "
                                     "sent after the signal", signal_name(signal_)));
  r.interrupted = interruption{signal_name(signal_), 0, o.duration_s};
  return r;
}

int interrupted_status(const std::string& signal_name) { return 128 + (signal_name == "SIGTERM" ? SIGTERM : SIGINT); }

}  // namespace nb::load
