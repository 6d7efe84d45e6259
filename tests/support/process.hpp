#pragma once
// Test support: start a real program with its stdout and stderr captured, wait for a line, stop it.
// Tests use the real binaries; this only spawns and reads them, through the project's one runner
// (harness/process/process.hpp), each child on an io_context of its own so that tests stay synchronous.
#include "harness/process/process.hpp"

#include <boost/asio/io_context.hpp>

#include <sys/types.h>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace nb::test {

struct completed {
  int status = -1;  // exit code, or 128 + signal
  std::string out, err;
};

class child {
 public:
  explicit child(const std::vector<std::string>& argv);
  ~child();
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  // Reads stdout until a full line arrives (or the timeout passes, or stdout ends: throws).
  std::string read_line(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // SIGTERM, then waits; returns what was left of stdout/stderr.
  completed stop(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Waits for the exit (throws after the timeout, killing the child).
  completed wait(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Its stdin is a pipe of ours: write to it, or close it (end of file for the child).
  void write_stdin(const std::string& text);
  void close_stdin();
  // What stderr has said so far (non-blocking read of what is available).
  const std::string& err_so_far();
  pid_t pid() const { return pid_; }

 private:
  boost::asio::io_context io_;  // before proc_: outlives it
  std::unique_ptr<nb::child_process> proc_;
  pid_t pid_ = -1;
};

// Runs to completion, with stdin at end of file.
completed run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = std::chrono::seconds(60));

// Paths of the built programs (from compile definitions).
std::string netserve_path();
std::string netload_path();

}  // namespace nb::test
