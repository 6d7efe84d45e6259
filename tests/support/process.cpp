#include "tests/support/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <stdexcept>

extern char** environ;

namespace nb::test {

child::child(const std::vector<std::string>& argv) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int rc = ::posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_fd_ = in[1];
  out_fd_ = out[0];
  err_fd_ = err[0];
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], rc));
}

child::~child() {
  if (!exited_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  close_stdin();
  ::close(out_fd_);
  ::close(err_fd_);
}

void child::write_stdin(const std::string& text) {
  if (in_fd_ < 0 || ::write(in_fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    throw std::runtime_error("cannot write to the child's stdin");
}

void child::close_stdin() {
  if (in_fd_ >= 0) ::close(in_fd_);
  in_fd_ = -1;
}

void child::pump(int timeout_ms) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (::poll(fds, 2, timeout_ms) <= 0) return;
  char buf[65536];
  if (fds[0].revents) {
    ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n > 0) out_.append(buf, static_cast<std::size_t>(n));
  }
  if (fds[1].revents) {
    ssize_t n = ::read(err_fd_, buf, sizeof buf);
    if (n > 0) err_.append(buf, static_cast<std::size_t>(n));
  }
}

std::string child::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = out_.find('\n'); nl != std::string::npos) {
      std::string line = out_.substr(0, nl);
      out_.erase(0, nl + 1);
      return line;
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(fmt::format("no line on stdout in time; stderr: {}", err_));
    pump(50);
  }
}

const std::string& child::err_so_far() {
  pump(0);
  pump(0);
  return err_;
}

completed child::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    pump(20);
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      exited_ = true;
      throw std::runtime_error(fmt::format("process did not end in time; stderr: {}", err_));
    }
  }
  exited_ = true;
  for (int i = 0; i < 100; ++i) {  // drain what is left in the pipes
    std::size_t before = out_.size() + err_.size();
    pump(0);
    if (out_.size() + err_.size() == before) break;
  }
  completed c;
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  c.out = out_;
  c.err = err_;
  return c;
}

completed child::stop(std::chrono::milliseconds timeout) {
  ::kill(pid_, SIGTERM);
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
