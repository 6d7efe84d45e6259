#pragma once
// A user's stop, taken the same way by every harness command that runs processes: Ctrl-C (SIGINT),
// SIGTERM, or a closed terminal or ssh session (SIGHUP), which must not orphan what we started any more
// than Ctrl-C. Each signal calls on_stop; the handler stays armed, so the caller escalates on the second
// one (its processes killed at once instead of stopped).
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <functional>
#include <string>

namespace harness {

class stop_signals {
 public:
  // `what` names what a stop ends, for the one line each signal prints ("process", "command"); an empty
  // `what` prints nothing (the caller's own output says it).
  stop_signals(boost::asio::io_context& io, std::string what, std::function<void(int sig)> on_stop);
  // The work is over: no more waits, so io_context::run() can return.
  void close();

 private:
  void arm();

  boost::asio::signal_set set_;
  std::string what_;
  std::function<void(int)> on_stop_;
  bool signalled_ = false;
};

// After a hang-up the terminal is gone and a write to it fails (EIO), which fmt reports by throwing: what
// still goes there goes to /dev/null instead. Output redirected to a file keeps going to it.
void quiet_lost_terminal();

}  // namespace harness
