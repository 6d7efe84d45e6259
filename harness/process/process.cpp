#include "harness/process/process.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>

// Boost 1.81's Process v2 with BOOST_PROCESS_USE_STD_FS needs these first.
#include <boost/optional.hpp>
#include <boost/type_traits/remove_pointer.hpp>
#include <memory>
#include <type_traits>

#include <boost/process/v2.hpp>

#include <cerrno>
#include <csignal>
#include <exception>
#include <stdexcept>
#include <system_error>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nb {

namespace bp = boost::process::v2;
using asio::use_awaitable;
using namespace asio::experimental::awaitable_operators;

struct child_process::state {
  state(asio::any_io_executor ex) : in(ex), out(ex), err(ex), deadline(ex) {}
  asio::writable_pipe in;
  asio::readable_pipe out, err;
  std::optional<bp::process> proc;
  asio::steady_timer deadline;
  std::string out_buf, err_buf;
  bool timed_out = false;
  bool exited = false;
  int exit_code = -1;
};

namespace {

std::string resolve(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  auto path = bp::environment::find_executable(program);
  if (path.empty()) throw std::runtime_error(fmt::format("cannot start '{}': not found in PATH", program));
  return path.string();
}

// Boost 1.81's Process v2 leaves inherited pipe ends open in later children (a stdin never reaching end of
// file): close-on-exec from the start; dup2 onto 0, 1 and 2 clears the flag for the child's own ends.
void cloexec_pipe(asio::readable_pipe& r, asio::writable_pipe& w) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw fmt::system_error(errno, "pipe2");
  r.assign(fds[0]);
  w.assign(fds[1]);
}

// 128+N for signal N, as a shell says: Boost's bare N cannot be told from an exit status N.
int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

// ESRCH: already reaped, as asked; EPERM never happens to our own child.
void signal_child(int pid, int sig) {
  if (::kill(pid, sig) != 0 && errno != ESRCH) throw fmt::system_error(errno, "kill({}, {})", pid, sig);
}

// A group of its own, so a terminal's Ctrl-C does not stop netserve before its netloads' end exchange (the
// parent stops children in order); PDEATHSIG stops them if the parent is SIGKILLed.
struct own_group {
  pid_t parent;
  template <class Launcher>
  boost::system::error_code on_exec_setup(Launcher&, const bp::filesystem::path&, const char* const*&) const {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl: no orphan
    return {};
  }
};

}  // namespace

child_process::child_process(asio::any_io_executor ex, const std::vector<std::string>& argv, bool to_stdin)
    : s_(std::make_shared<state>(ex)) {
  if (argv.empty()) throw std::runtime_error("empty command");
  asio::readable_pipe in_r(ex);
  asio::writable_pipe out_w(ex), err_w(ex);
  if (to_stdin) cloexec_pipe(in_r, s_->in);
  cloexec_pipe(s_->out, out_w);
  cloexec_pipe(s_->err, err_w);
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  try {
    if (to_stdin)
      s_->proc.emplace(ex, resolve(argv[0]), args, bp::process_stdio{in_r, out_w, err_w}, own_group{::getpid()});
    else s_->proc.emplace(ex, resolve(argv[0]), args, bp::process_stdio{nullptr, out_w, err_w}, own_group{::getpid()});
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot start '{}': {}", argv[0], e.what()));
  }
}

child_process::~child_process() {
  if (s_ && s_->proc && !s_->exited) {
    boost::system::error_code ec;
    if (s_->proc->running(ec)) s_->proc->terminate(ec);  // never leave a load generator behind
  }
}

int child_process::pid() const { return s_->proc ? s_->proc->id() : -1; }

bool child_process::running() {
  boost::system::error_code ec;
  return s_->proc && !s_->exited && s_->proc->running(ec);
}

bool child_process::write_stdin(const std::string& line) {
  if (!s_->in.is_open()) return false;
  boost::system::error_code ec;
  asio::write(s_->in, asio::buffer(line), ec);  // EPIPE, not SIGPIPE (ignored in main)
  return !ec;
}

asio::awaitable<void> child_process::feed_stdin(std::string text) {
  auto s = s_;
  std::signal(SIGPIPE, SIG_IGN);  // a child exiting unread must be EPIPE, not our death
  auto [ec, n] = co_await asio::async_write(s->in, asio::buffer(text), asio::as_tuple(use_awaitable));
  (void)ec;
  (void)n;
  close_stdin();
}

const std::string& child_process::stderr_so_far() {
  // Asio's pipes have no non-blocking mode: read only what poll says is there.
  char buf[65536];
  boost::system::error_code ec;
  while (!ec && s_->err.is_open()) {
    pollfd p{s_->err.native_handle(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP))) break;
    const std::size_t n = s_->err.read_some(asio::buffer(buf), ec);
    s_->err_buf.append(buf, n);
  }
  return s_->err_buf;
}

void child_process::close_stdin() {
  boost::system::error_code ec;
  s_->in.close(ec);
}

void child_process::request_stop() {
  if (s_->proc && !s_->exited) signal_child(s_->proc->id(), SIGTERM);
}

void child_process::kill() {
  if (s_->proc && !s_->exited) signal_child(s_->proc->id(), SIGKILL);
}

void child_process::arm_deadline(std::chrono::steady_clock::time_point deadline) {
  s_->deadline.expires_at(deadline);
  s_->deadline.async_wait([w = std::weak_ptr<state>(s_)](boost::system::error_code ec) {
    auto st = w.lock();
    if (ec || !st || st->exited || !st->proc) return;
    st->timed_out = true;
    signal_child(st->proc->id(), SIGKILL);
  });
}

asio::awaitable<std::optional<std::string>> child_process::read_line(std::chrono::steady_clock::time_point deadline) {
  auto s = s_;
  arm_deadline(deadline);
  auto [ec, n] =
      co_await asio::async_read_until(s->out, asio::dynamic_buffer(s->out_buf), '\n', asio::as_tuple(use_awaitable));
  s->deadline.cancel();
  if (ec) co_return std::nullopt;
  std::string line = s->out_buf.substr(0, n - 1);
  s->out_buf.erase(0, n);
  co_return line;
}

asio::awaitable<process_outcome> child_process::finish(std::chrono::steady_clock::time_point deadline,
                                                       const std::function<void(const std::string&)>* on_line) {
  auto s = s_;
  auto read_out = [](std::shared_ptr<state> st,
                     const std::function<void(const std::string&)>* cb) -> asio::awaitable<void> {
    if (!cb) {
      auto [ec, n] =
          co_await asio::async_read(st->out, asio::dynamic_buffer(st->out_buf), asio::as_tuple(use_awaitable));
      (void)ec;
      (void)n;
      co_return;
    }
    for (;;) {
      auto [ec, n] = co_await asio::async_read_until(st->out, asio::dynamic_buffer(st->out_buf), '\n',
                                                     asio::as_tuple(use_awaitable));
      if (ec) co_return;
      std::string line = st->out_buf.substr(0, n - 1);
      st->out_buf.erase(0, n);
      (*cb)(line);
    }
  };
  auto read_err = [](std::shared_ptr<state> st) -> asio::awaitable<void> {
    auto [ec, n] = co_await asio::async_read(st->err, asio::dynamic_buffer(st->err_buf), asio::as_tuple(use_awaitable));
    (void)ec;
    (void)n;
  };
  arm_deadline(deadline);
  co_await (read_out(s, on_line) && read_err(s));
  auto [ec, code] = co_await s->proc->async_wait(asio::as_tuple(use_awaitable));
  (void)code;
  s->deadline.cancel();
  s->exited = true;
  s->exit_code = ec ? -1 : shell_status(s->proc->native_exit_code());
  process_outcome o;
  o.exit_code = s->exit_code;
  o.timed_out = s->timed_out;
  o.stdout_text = std::move(s->out_buf);
  o.stderr_text = std::move(s->err_buf);
  co_return o;
}

asio::awaitable<process_outcome> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                             std::string input) {
  auto ex = co_await asio::this_coro::executor;
  child_process p(ex, argv, !input.empty());
  const auto deadline = std::chrono::steady_clock::now() + limit;
  if (input.empty()) {
    process_outcome o = co_await p.finish(deadline);
    co_return o;
  }
  process_outcome o = co_await (p.feed_stdin(std::move(input)) && p.finish(deadline));
  co_return o;
}

process_outcome run_blocking(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                             const std::string& input) {
  asio::io_context io;
  return run_on(io, run_command(argv, limit, input));
}

}  // namespace nb
