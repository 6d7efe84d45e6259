#pragma once
// The project's one way to run a child process (the harness's netserve/netload and the ssh or
// ip-netns-exec that carries them, the lab's ip/tc/nft, the tests' real programs): argv only, never a
// shell string; stdout read line by line as it comes, stderr collected; a hard deadline after which it
// is killed; killed on cancel. Boost.Process v2 underneath (library netbench_process, not netbench_core:
// netserve and netload never start processes).
// Errors: what cannot start throws (std::runtime_error naming the program; fmt::system_error for a
// failed pipe); how a started child ends (its status, a signal, the deadline) is a process_outcome,
// never an exception; write_stdin's false says the child is gone.
#include "core/base/text.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb {

namespace asio = boost::asio;

struct process_outcome {
  int exit_code = -1;       // the program's status; 128+N when a signal N ended it, as a shell says
  bool timed_out = false;   // the deadline killed it
  std::string stdout_text;  // what on_line / read_line did not consume (everything when no callback)
  std::string stderr_text;
};

class child_process {
 public:
  // Starts argv[0] (searched in PATH when not a path). Throws std::runtime_error when it cannot start.
  // Its stdin is /dev/null, or with `to_stdin` a pipe that write_stdin feeds.
  child_process(asio::any_io_executor ex, const std::vector<std::string>& argv, bool to_stdin = false);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  // Reads stdout to its end, handing each line to on_line, and stderr to its end, then reaps the
  // process. Killed (SIGKILL) once the deadline passes.
  // on_line is a pointer, not a std::function by value: GCC 12 mis-destroys non-trivial temporaries that
  // live across a co_await, and a default-constructed std::function argument would be one.
  asio::awaitable<process_outcome> finish(std::chrono::steady_clock::time_point deadline,
                                          const std::function<void(const std::string&)>* on_line = nullptr);
  // Reads stdout up to the next line; nullopt at end of file or deadline (then the process is killed).
  asio::awaitable<std::optional<std::string>> read_line(std::chrono::steady_clock::time_point deadline);

  // One short line (well under the pipe's buffer, so it never blocks); false when the child is gone.
  bool write_stdin(const std::string& line);
  // All of `text`, however long, while the child reads it; then stdin is closed (end of file).
  asio::awaitable<void> feed_stdin(std::string text);
  void close_stdin();
  // Stderr so far, without waiting: what the pipe holds now is read first.
  const std::string& stderr_so_far();

  void request_stop();  // SIGTERM: let it shut down cleanly
  void kill();          // SIGKILL
  int pid() const;
  bool running();

 public:
  struct state;  // shared with the deadline handler, which may outlive a call

 private:
  void arm_deadline(std::chrono::steady_clock::time_point deadline);
  std::shared_ptr<state> s_;
};

// Runs a command to its end, with a deadline, `input` on its stdin (/dev/null when empty); output collected.
asio::awaitable<process_outcome> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                             std::string input = {});
// `work`, then `at_end` however it ended (by a value or an exception).
template <typename T>
asio::awaitable<T> then_at_end(asio::awaitable<T> work, std::function<void()> at_end) {
  struct on_exit {
    std::function<void()>& f;
    ~on_exit() {
      if (f) f();
    }
  } guard{at_end};
  co_return co_await std::move(work);
}

// One coroutine run to its end on `io`, for code that is not a coroutine (the commands, the lab, the
// tests); `at_end` runs as it ends, to close what else keeps `io` running (a signal set, a server).
// Returns its value or rethrows what it threw.
template <typename T>
T run_on(asio::io_context& io, asio::awaitable<T> work, std::function<void()> at_end = {}) {
  std::future<T> done = asio::co_spawn(io, then_at_end(std::move(work), std::move(at_end)), asio::use_future);
  io.restart();
  io.run();
  // io.run() returns only once nothing is pending, which the unfinished work would be.
  if (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    throw std::logic_error("run_on: the io_context stopped before its work ended");
  return done.get();
}

// run_command on a private io_context, for code that is not a coroutine.
// Throws std::runtime_error when the command cannot start.
process_outcome run_blocking(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                             const std::string& input = {});

// quote_argv and shell_quote ("a b 'c d'", for logs, dry runs and the string ssh hands to the remote
// shell): core/base/text.hpp.

}  // namespace nb
