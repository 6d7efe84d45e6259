#pragma once
// SIGINT, SIGTERM and SIGHUP (a closed ssh session must not orphan our processes) taken alike by every
// command. The handler stays armed, so the caller escalates on a second signal.
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <functional>
#include <string>

namespace harness {

class stop_signals {
 public:
  // `what` names what a stop ends in the line each signal prints; empty prints nothing.
  stop_signals(boost::asio::io_context& io, std::string what, std::function<void(int sig)> on_stop);
  // So that io_context::run() can return.
  void close();

 private:
  void arm();

  boost::asio::signal_set set_;
  std::string what_;
  std::function<void(int)> on_stop_;
  bool signalled_ = false;
};

// After a hang-up, writes to the lost terminal fail (EIO) and fmt throws: send them to /dev/null.
void quiet_lost_terminal();

}  // namespace harness
