#include "tests/support/process.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace nb::test {
namespace {

std::chrono::steady_clock::time_point after(std::chrono::milliseconds timeout) {
  return std::chrono::steady_clock::now() + timeout;
}

}  // namespace

child::child(const std::vector<std::string>& argv)
    : proc_(std::make_unique<nb::child_process>(io_.get_executor(), argv, true)), pid_(proc_->pid()) {}

child::~child() {
  proc_.reset();  // kills it if it still runs, and reaps it
}

void child::write_stdin(const std::string& text) {
  if (!proc_->write_stdin(text)) throw std::runtime_error("cannot write to the child's stdin");
}

void child::close_stdin() { proc_->close_stdin(); }

std::string child::read_line(std::chrono::milliseconds timeout) {
  if (auto line = run_on(io_, proc_->read_line(after(timeout)))) return *line;
  // The deadline killed it, or stdout ended: either way its stderr is complete now.
  const process_outcome o = run_on(io_, proc_->finish(after(std::chrono::seconds(10))));
  throw std::runtime_error(fmt::format("no line on stdout in time; stderr: {}", o.stderr_text));
}

const std::string& child::err_so_far() { return proc_->stderr_so_far(); }

completed child::wait(std::chrono::milliseconds timeout) {
  const process_outcome o = run_on(io_, proc_->finish(after(timeout)));
  if (o.timed_out) throw std::runtime_error(fmt::format("process did not end in time; stderr: {}", o.stderr_text));
  return {o.exit_code, o.stdout_text, o.stderr_text};
}

completed child::stop(std::chrono::milliseconds timeout) {
  proc_->request_stop();
  return wait(timeout);
}

completed run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  child c(argv);
  c.close_stdin();
  return c.wait(timeout);
}

std::string netserve_path() { return NETSERVE_PATH; }
std::string netload_path() { return NETLOAD_PATH; }

}  // namespace nb::test
