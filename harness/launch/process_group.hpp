#pragma once
// Every child process a harness command runs, tracked while it lives, so that a user's stop reaches each
// one: stop() asks them to end (SIGTERM) and kills them all (SIGKILL) if they have not within
// kill_after; kill() does at once. A member leaves when its membership ends, so no signal ever reaches a
// process that is gone (its pid may be another's by then). Used by `harness run`, `check` and `deploy`.
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
  // before_kill runs once, when the group escalates to SIGKILL (the runner signals remote programs there).
  explicit process_group(boost::asio::io_context& io, std::chrono::milliseconds kill_after = std::chrono::seconds(5),
                         std::function<void()> before_kill = {});
  process_group(const process_group&) = delete;
  process_group& operator=(const process_group&) = delete;

  // Membership for a scope: the process is a member until this ends, then on_leave runs (the owner's
  // own records of it are dropped there too).
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

  // For a process held across scopes (a run's netserves): a member from join() to leave().
  void join(nb::child_process& p) { members_.insert(&p); }
  void leave(nb::child_process& p);

  // argv started, run to its end within limit, `input` fed to its stdin when given; a member meanwhile.
  boost::asio::awaitable<nb::process_outcome> run(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                                  const std::string* input = nullptr);

  // SIGTERM to every member `spare` does not keep back (nullptr: all), then kill() after kill_after unless
  // every member has ended by then.
  void stop(const std::function<bool(nb::child_process*)>& spare = nullptr);
  void kill();
  bool killed() const { return killed_; }
  // The work is over: no escalation pending.
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
