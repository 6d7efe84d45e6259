#pragma once
// Child processes by argv, never a shell, killed at a deadline; apart from core, which never starts one.
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
  int exit_code = -1;  // 128+N when signal N ended it, as a shell says
  bool timed_out = false;
  std::string stdout_text;  // what on_line / read_line did not consume
  std::string stderr_text;
};

class child_process {
 public:
  // Throws when argv[0] cannot start.
  child_process(asio::any_io_executor ex, const std::vector<std::string>& argv, bool to_stdin = false);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  // on_line is a pointer: GCC 12 mis-destroys a default std::function argument living across a co_await.
  asio::awaitable<process_outcome> finish(std::chrono::steady_clock::time_point deadline,
                                          const std::function<void(const std::string&)>* on_line = nullptr);
  // nullopt at end of file or at the deadline.
  asio::awaitable<std::optional<std::string>> read_line(std::chrono::steady_clock::time_point deadline);

  // Short: under the pipe's buffer, so it never blocks. False when the child is gone.
  bool write_stdin(const std::string& line);
  asio::awaitable<void> feed_stdin(std::string text);
  void close_stdin();
  const std::string& stderr_so_far();

  void request_stop();  // SIGTERM
  void kill();
  int pid() const;
  bool running();

 public:
  struct state;  // the deadline handler may outlive a call

 private:
  void arm_deadline(std::chrono::steady_clock::time_point deadline);
  std::shared_ptr<state> s_;
};

asio::awaitable<process_outcome> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                             std::string input = {});
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

// `at_end` closes what else keeps `io` running (a signal set, a server).
template <typename T>
T run_on(asio::io_context& io, asio::awaitable<T> work, std::function<void()> at_end = {}) {
  std::future<T> done = asio::co_spawn(io, then_at_end(std::move(work), std::move(at_end)), asio::use_future);
  io.restart();
  io.run();
  if (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    throw std::logic_error("run_on: the io_context stopped before its work ended");
  return done.get();
}

// Throws when the command cannot start.
process_outcome run_blocking(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                             const std::string& input = {});

}  // namespace nb
