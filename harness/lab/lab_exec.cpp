#include "harness/lab/lab_exec.hpp"

#include "harness/lab/lab.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lab {
namespace {

struct pipe_fds {
  int r = -1, w = -1;
  pipe_fds() {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw lab_error(fmt::format("pipe: {}", std::strerror(errno)));
    r = p[0];
    w = p[1];
  }
  ~pipe_fds() {
    close_r();
    close_w();
  }
  void close_r() { if (r >= 0) ::close(r), r = -1; }
  void close_w() { if (w >= 0) ::close(w), w = -1; }
};

[[noreturn]] void exec_child(const argv_t& argv, int in, int out, int err) {
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  const std::string msg = fmt::format("cannot execute {}: {}\n", argv[0], std::strerror(errno));
  (void)!::write(2, msg.data(), msg.size());
  ::_exit(127);
}

// Feeds stdin and drains stdout/stderr until both close or the deadline passes.
bool pump(pipe_fds& in, pipe_fds& out, pipe_fds& err, const std::string& input, command_result& res,
          std::chrono::steady_clock::time_point end) {
  std::size_t written = 0;
  if (input.empty()) in.close_w();
  char buf[4096];
  while (out.r >= 0 || err.r >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[3] = {{out.r, POLLIN, 0}, {err.r, POLLIN, 0}, {in.w, POLLOUT, 0}};
    if (::poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR) return false;
    if (fds[2].revents & (POLLOUT | POLLERR | POLLHUP)) {
      const ssize_t n = ::write(in.w, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 || written == input.size()) in.close_w();
    }
    for (int k = 0; k < 2; ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      pipe_fds& p = k == 0 ? out : err;
      const ssize_t n = ::read(p.r, buf, sizeof buf);
      if (n > 0) (k == 0 ? res.out : res.err).append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) p.close_r();
    }
  }
  return true;
}

}  // namespace

std::string show(const argv_t& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  return s;
}

command_result run_command(const argv_t& argv, const std::string& input, std::chrono::milliseconds deadline) {
  pipe_fds in, out, err;
  // Writing to a child that exited early must be an error code, not a SIGPIPE that kills us.
  std::signal(SIGPIPE, SIG_IGN);
  const pid_t pid = ::fork();
  if (pid < 0) throw lab_error(fmt::format("fork for `{}`: {}", show(argv), std::strerror(errno)));
  if (pid == 0) exec_child(argv, in.r, out.w, err.w);
  in.close_r();
  out.close_w();
  err.close_w();
  command_result res;
  res.timed_out = !pump(in, out, err, input, res, std::chrono::steady_clock::now() + deadline);
  if (res.timed_out) ::kill(pid, SIGKILL);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  res.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return res;
}

std::string must_run(const argv_t& argv, const std::string& input) {
  const command_result r = run_command(argv, input);
  if (r.timed_out) throw lab_error(fmt::format("command `{}` did not finish within its deadline", show(argv)));
  if (r.status != 0) {
    std::string e = r.err.empty() ? r.out : r.err;
    while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
    for (auto& c : e) if (c == '\n') c = ' ';
    throw lab_error(fmt::format("command `{}` failed (exit {}): {}", show(argv), r.status, e));
  }
  return r.out;
}

}  // namespace lab
