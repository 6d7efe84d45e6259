#include "harness/process.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
// Boost 1.81's Process v2 with BOOST_PROCESS_USE_STD_FS forgets these includes.
#include <boost/optional.hpp>
#include <boost/type_traits/remove_pointer.hpp>
#include <memory>
#include <type_traits>
#include <boost/process/v2.hpp>
#include <fmt/format.h>

#include <signal.h>

namespace harness {

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

}  // namespace

child_process::child_process(asio::any_io_executor ex, const std::vector<std::string>& argv, bool to_stdin)
    : s_(std::make_shared<state>(ex)) {
  if (argv.empty()) throw std::runtime_error("empty command");
  asio::readable_pipe in_r(ex);
  asio::writable_pipe out_w(ex), err_w(ex);
  if (to_stdin) asio::connect_pipe(in_r, s_->in);
  asio::connect_pipe(s_->out, out_w);
  asio::connect_pipe(s_->err, err_w);
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  try {
    if (to_stdin)
      s_->proc.emplace(ex, resolve(argv[0]), args, bp::process_stdio{in_r, out_w, err_w});
    else
      s_->proc.emplace(ex, resolve(argv[0]), args, bp::process_stdio{nullptr, out_w, err_w});
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot start '{}': {}", argv[0], e.what()));
  }
  // Our copies of the write ends close here, so the reads see end of file when the child exits.
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
  asio::write(s_->in, asio::buffer(line), ec);  // a dead reader is EPIPE here: SIGPIPE is ignored in main
  return !ec;
}

void child_process::close_stdin() {
  boost::system::error_code ec;
  s_->in.close(ec);
}

void child_process::request_stop() {
  if (s_->proc && !s_->exited) ::kill(s_->proc->id(), SIGTERM);
}

void child_process::kill() {
  if (s_->proc && !s_->exited) ::kill(s_->proc->id(), SIGKILL);
}

// The deadline kills the process; the pipes then reach end of file, so every pending read completes.
void child_process::arm_deadline(std::chrono::steady_clock::time_point deadline) {
  s_->deadline.expires_at(deadline);
  s_->deadline.async_wait([w = std::weak_ptr<state>(s_)](boost::system::error_code ec) {
    auto st = w.lock();
    if (ec || !st || st->exited || !st->proc) return;
    st->timed_out = true;
    ::kill(st->proc->id(), SIGKILL);
  });
}

asio::awaitable<std::optional<std::string>> child_process::read_line(std::chrono::steady_clock::time_point deadline) {
  auto s = s_;
  arm_deadline(deadline);
  auto [ec, n] = co_await asio::async_read_until(s->out, asio::dynamic_buffer(s->out_buf), '\n',
                                                 asio::as_tuple(use_awaitable));
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
    if (!cb) {  // keep it all in out_buf
      auto [ec, n] = co_await asio::async_read(st->out, asio::dynamic_buffer(st->out_buf), asio::as_tuple(use_awaitable));
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
  s->deadline.cancel();
  s->exited = true;
  s->exit_code = ec ? -1 : code;
  process_outcome o;
  o.exit_code = s->exit_code;
  o.timed_out = s->timed_out;
  o.stdout_text = std::move(s->out_buf);
  o.stderr_text = std::move(s->err_buf);
  co_return o;
}

asio::awaitable<process_outcome> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit) {
  auto ex = co_await asio::this_coro::executor;
  child_process p(ex, argv);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  process_outcome o = co_await p.finish(deadline);
  co_return o;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-./,:=+@%") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string quote_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + shell_quote(a);
  return out;
}

}  // namespace harness
