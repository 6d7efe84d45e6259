#include "harness/watch/watch.hpp"

#include "core/base/clock.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "harness/app/app_run.hpp"
#include "harness/launch/launcher.hpp"
#include "harness/launch/stop_signals.hpp"
#include "harness/process/process.hpp"
#include "harness/watch/metrics.hpp"
#include "harness/watch/metrics_server.hpp"
#include "harness/watch/watch_line.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstring>
#include <functional>
#include <memory>

namespace harness::watch {

namespace {

using clock = std::chrono::steady_clock;

class watcher {
 public:
  watcher(asio::io_context& io, const watch_request& w, const plan& p, std::string bin_dir)
      : io_(io), w_(w), plan_(p), bin_dir_(std::move(bin_dir)), wait_(io) {}

  asio::awaitable<void> loop();
  // A signal: inside a run, the run is stopped as `harness run` stops it (a second signal kills); between
  // runs, the wait ends and no run starts.
  void on_signal(int sig);
  int status() const { return stop_signal_ ? 128 + stop_signal_ : status_; }
  std::string metrics() const { return render_openmetrics(counts_, last_); }

 private:
  asio::awaitable<void> run_once(const run_timing& t);
  asio::awaitable<void> linger();
  void account(const finished_run& f, const run_timing& t);

  asio::io_context& io_;
  const watch_request& w_;
  const plan& plan_;
  std::string bin_dir_;
  asio::steady_timer wait_;
  runner* current_ = nullptr;
  int stop_signal_ = 0;
  int status_ = 0;
  bool stopping_run_ = false;
  bool lingering_ = false;  // after the last run, the endpoint still serving its figures
  run_counts counts_;
  std::optional<completed_run> last_;
};

void watcher::on_signal(int sig) {
  if (lingering_) {  // every run is done: the signal only closes the endpoint sooner, the status stays
    fmt::print(stderr, "harness: signal {} ({}): the metrics endpoint closes now\n", sig, strsignal(sig));
    lingering_ = false;
    wait_.cancel();
    return;
  }
  if (current_) {
    fmt::print(
        stderr, "harness: signal {} ({}): {}\n", sig, strsignal(sig),
        stopping_run_ ? "killing every process" : "stopping the run under way (again to kill its processes at once)");
    stopping_run_ = true;
    current_->cancel(sig);
  } else {
    fmt::print(stderr, "harness: signal {} ({}): the watch ends; no run starts after it\n", sig, strsignal(sig));
    wait_.cancel();
  }
  if (!stop_signal_) stop_signal_ = sig;
}

asio::awaitable<void> watcher::loop() {
  clock::time_point previous_start{}, previous_end{};
  for (int n = 1; (w_.count == 0 || n <= w_.count) && !stop_signal_; ++n) {
    run_timing timing{n, w_.every};
    const auto start = clock::now();
    if (n > 1) {
      timing.since_previous_start = start - previous_start;
      timing.previous_took = previous_end - previous_start;
    }
    timing.started_unix = nb::ns_to_s(nb::wall_ns());
    co_await run_once(timing);
    std::fflush(stdout);
    previous_start = start;
    previous_end = clock::now();
    if (stop_signal_ || n == w_.count) break;
    // Checked and started with no suspension between: a signal's handler runs only while we wait.
    wait_.expires_at(start + w_.every);
    co_await wait_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  if (!stop_signal_ && w_.count && !w_.listen.empty() && w_.linger.count() > 0) co_await linger();
}

// The last run ended a moment ago: closing the endpoint now would leave its figures unread by a scraper
// that comes every interval.
asio::awaitable<void> watcher::linger() {
  fmt::print(stderr, "harness: the last run's figures stay served for {} (--linger), then the watch ends\n",
             nb::format_period(w_.linger));
  lingering_ = true;
  wait_.expires_after(w_.linger);
  co_await wait_.async_wait(asio::as_tuple(asio::use_awaitable));
  lingering_ = false;
}

asio::awaitable<void> watcher::run_once(const run_timing& t) {
  std::filesystem::path dir;
  runner r(io_, plan_, {w_.run.results_root, bin_dir_, w_.run.live, w_.run.allow_offset});
  current_ = &r;
  stopping_run_ = false;
  std::exception_ptr failure;
  try {
    dir = co_await r.run_all();
  } catch (...) {
    failure = std::current_exception();
  }
  current_ = nullptr;
  if (!failure) {
    const finished_run f = finish_run(w_.run, r, dir, stderr);
    if (!f.dir.empty()) account(f, t);  // else stopped before it began: finish_run said so
    co_return;
  }
  // The first run's error is the plan's or a host's, said as `harness run` says it; a later one (a host
  // that went away) is that run's line, and the watch goes on.
  if (t.number == 1 || stop_signal_) std::rethrow_exception(failure);
  ++counts_.runs;
  ++counts_.failed;
  status_ = 1;
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    fmt::print("{}\n", error_line(t, e.what()));
  }
}

void watcher::account(const finished_run& f, const run_timing& t) {
  ++counts_.runs;
  if (f.signal) ++counts_.interrupted;
  else if (f.status == 3) ++counts_.failed;
  if (f.status != 0 && !f.signal) status_ = f.status;
  fmt::print("{}\n", run_line(t, f));
  // The metrics show the last run that completed: a stopped one leaves the previous run's figures.
  if (!f.signal) last_ = completed_run{plan_.name, f.runs, f.searches, f.verdict};
}

}  // namespace

int watch_plan(const watch_request& w) {
  const plan p = load_for_run(w.run);
  const std::string bin_dir = find_local_bin_dir(w.run.self_exe, w.run.bin_dir);
  asio::io_context io;
  watcher watch(io, w, p, bin_dir);
  std::unique_ptr<metrics_server> server;
  if (!w.listen.empty()) {
    server = std::make_unique<metrics_server>(io, parse_listen(w.listen), [&] { return watch.metrics(); });
    const auto at = server->local_endpoint();
    // One line a script can read to find the port the kernel chose for :0.
    fmt::print(stderr, "harness: metrics on http://{}:{}/metrics\n",
               at.address().is_v6() ? fmt::format("[{}]", at.address().to_string()) : at.address().to_string(),
               at.port());
    server->start();
  }
  fmt::print(stderr, "harness: watching {} every {}{}\n", nb::printable(p.name), nb::format_period(w.every),
             w.count ? fmt::format(", {} run(s)", w.count) : std::string(", until stopped (Ctrl-C)"));
  // Each signal's line is the watcher's: it says whether a run or only the wait was stopped.
  stop_signals signals(io, "", [&watch](int sig) { watch.on_signal(sig); });
  nb::run_on(io, watch.loop(), [&] {
    signals.close();
    if (server) server->stop();
  });
  return watch.status();
}

}  // namespace harness::watch
