#pragma once
// The children of a harness command, so that a stop reaches each: SIGTERM, SIGKILL after kill_after. A
// member leaves when its membership ends, so no signal reaches a reused pid.
#include "harness/process/process.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace harness {

class process_group {
 public:
  // before_kill runs once, on escalation to SIGKILL (remote programs are signalled there).
  explicit process_group(boost::asio::io_context& io, std::chrono::milliseconds kill_after = std::chrono::seconds(5),
                         std::function<void()> before_kill = {});
  process_group(const process_group&) = delete;
  process_group& operator=(const process_group&) = delete;

  // on_leave runs as it ends.
  class membership {
   public:
    membership(process_group& g, nb::child_process& p, std::function<void()> on_leave = {});
    ~membership();
    membership(const membership&) = delete;
    membership& operator=(const membership&) = delete;

   private:
    process_group& group_;
    nb::child_process* p_;
    std::function<void()> on_leave_;
  };

  // A process held across scopes (a run's netserves).
  void join(nb::child_process& p) { members_.insert(&p); }
  void leave(nb::child_process& p);

  boost::asio::awaitable<nb::process_outcome> run(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                                  const std::string* input = nullptr);

  // SIGTERM to each member `spare` does not keep, then kill() after kill_after unless all have ended.
  void stop(const std::function<bool(nb::child_process*)>& spare = nullptr);
  void kill();
  bool killed() const { return killed_; }
  void close() { escalate_.cancel(); }

 private:
  std::set<nb::child_process*> members_;
  boost::asio::steady_timer escalate_;
  std::chrono::milliseconds kill_after_;
  std::function<void()> before_kill_;
  bool stopping_ = false;
  bool killed_ = false;
};

}  // namespace harness
