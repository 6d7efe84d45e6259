#include "harness/run/runner.hpp"

#include "core/base/clock.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/base/version.hpp"
#include "harness/report/results.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>

namespace harness {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using asio::use_awaitable;

namespace {

// A stopped netload keeps its figures within its own 3-s grace (netload/native/user_stop.cpp).
constexpr auto kill_after = 5s;
// A run's overhead before one is measured (docs/runner.md#the-live-view).
constexpr double startup_guess_s = 1.0;

unsigned stderr_columns() {
  winsize w{};
  return ::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 ? w.ws_col : 0;
}

long utc_offset_s(double epoch_s) {
  const auto t = static_cast<std::time_t>(epoch_s);
  std::tm local{};
  return ::localtime_r(&t, &local) ? local.tm_gmtoff : 0;
}

}  // namespace

runner::runner(asio::io_context& io, const plan& p, run_options o)
    : io_(io), plan_(p), opt_(std::move(o)), group_(io, kill_after, [this] { before_kill(); }), pause_(io) {
  char tmpl[] = "/tmp/harness-ssh-XXXXXX";  // ssh control socket paths are limited to ~100 bytes
  if (!::mkdtemp(tmpl)) throw std::runtime_error("cannot create a temporary folder for ssh control sockets");
  control_dir_ = tmpl;
  for (const auto& [name, h] : plan_.hosts) launchers_.emplace(name, make_launcher(h, opt_.bin_dir, control_dir_));
  // stdout carries results.
  const char* term = std::getenv("TERM");
  terminal_ = opt_.live && ::isatty(STDERR_FILENO) == 1 && !(term && std::string_view(term) == "dumb");
}

runner::~runner() {
  std::error_code ec;
  fs::remove_all(control_dir_, ec);
}

void runner::cancel(int sig) {
  if (cancelled_) {
    group_.kill();
    return;
  }
  cancelled_ = true;
  stop_signal_ = sig;
  stop_wall_s_ = nb::ns_to_s(nb::wall_ns());
  pause_.cancel();
  // The signal's message went below the block: leave it.
  block_.forget();
  // Spared here: remote programs are signalled there, servers after their instances (docs/runner.md#stopping).
  group_.stop([this](nb::child_process* c) { return remote_.count(c) || servers_.count(c); });
  for (const auto& [proc, where] : remote_)
    if (!servers_.count(proc)) remote_signal_detached(where.first, where.second, "TERM");
}

void runner::before_kill() {
  fmt::print(stderr, "harness: killing every process (SIGKILL)\n");
  // Remote first: killing a local ssh client drops it from remote_.
  for (const auto& [proc, where] : remote_) remote_signal_detached(where.first, where.second, "KILL");
}

void runner::remote_signal_detached(const std::string& host, int pid, const char* sig) {
  ++remote_signals_pending_;
  asio::co_spawn(io_, remote_signal(host, pid, sig), [this, host](std::exception_ptr e, bool) {
    --remote_signals_pending_;
    if (e) fmt::print(stderr, "harness: could not signal a process on '{}'\n", nb::printable(host));
  });
}

asio::awaitable<bool> runner::remote_signal(std::string host, int pid, const char* sig) {
  const launcher& l = on(host);
  const std::vector<std::string> kill_cmd{"kill", fmt::format("-{}", sig), std::to_string(pid)};
  const auto argv = l.wrap(kill_cmd);
  record_command(host, argv);
  const auto o = co_await nb::run_command(argv, 10s);
  if (o.exit_code != 0 && std::string_view(sig) != "KILL")  // KILL may come after it ended
    fmt::print(stderr, "harness: '{}' failed: {}\n", nb::printable(nb::quote_argv(argv)),
               nb::printable_bounded(nb::first_line(o.stderr_text)));
  co_return o.exit_code == 0;
}

asio::awaitable<nb::process_outcome> runner::run_tracked(const std::vector<std::string>& argv,
                                                         std::chrono::milliseconds limit) {
  if (cancelled_) throw std::runtime_error("interrupted");
  nb::process_outcome o = co_await group_.run(argv, limit);
  if (cancelled_) throw std::runtime_error("interrupted");
  co_return o;
}

void runner::record_command(const std::string& host, const std::vector<std::string>& argv) {
  environment_["hosts"][host]["commands"].push_back(nb::quote_argv(argv));
}

void runner::write_environment() {
  if (!plan_.overrides.empty())
    environment_["overrides"] = {{"options", plan_.override_options}, {"changes", plan_.overrides}};
  write_json(dir_ / "environment.json", environment_);
}

asio::awaitable<void> runner::close_launchers() {
  // A `kill` on its way goes over the master: close it last.
  asio::steady_timer poll(io_);
  for (int i = 0; remote_signals_pending_ > 0 && i < 240; ++i) {
    poll.expires_after(50ms);
    co_await poll.async_wait(use_awaitable);
  }
  for (const auto& [name, l] : launchers_)
    if (auto argv = l->close_argv(); !argv.empty() && environment_["hosts"].contains(name))
      co_await nb::run_command(argv, 10s);
}

namespace {

// On a full disk every write fails: report the first.
template <class F>
void keep_first(std::exception_ptr& failure, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    if (!failure) failure = std::current_exception();
    else fmt::print(stderr, "harness: also: {}\n", e.what());
  }
}

}  // namespace

void runner::open_results_dir() {
  dir_ = make_results_dir(opt_.results_root, plan_.name);
  fmt::print(stderr, "harness: results in {}\n", dir_.string());
  write_file(dir_ / "plan.toml", plan_.source_text);
  write_environment();
}

asio::awaitable<fs::path> runner::run_all() {
  plan_started_ = nb::ns_to_s(nb::wall_ns());
  environment_ = {{"harness_version", nb::version},
                  {"plan", plan_.source_path},
                  {"started_utc", fmt::format("{:.3f}", nb::ns_to_s(nb::wall_ns()))},
                  {"hosts", nlohmann::json::object()}};
  std::exception_ptr failure;
  try {
    const auto runs = expand(plan_);
    // What `harness report` checks raw/ against.
    for (const auto& r : runs) environment_["planned_runs"].push_back(r.id);
    std::vector<planned_run> planned;
    for (const auto& r : runs) planned.push_back({r.duration, r.spec && r.spec->search.has_value()});
    progress_.emplace(std::move(planned), plan_.lead + plan_.settle + startup_guess_s);
    co_await preflight();
    if (plan_.has_lab) lab_ = lab::load_lab(plan_.source_path);
    if (!cancelled_) open_results_dir();
    for (std::size_t i = 0; i < runs.size() && !cancelled_; ++i) {
      if (i > 0) co_await settle_pause();
      if (cancelled_) break;
      progress_->start_run(i, nb::ns_to_s(nb::wall_ns()));
      if (runs[i].spec->search) co_await run_search(runs[i]);
      else co_await run_one(runs[i]);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  if (cancelled_ && failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const write_error&) {
    } catch (const std::exception&) {
      failure = nullptr;
    }
  }
  if (!dir_.empty()) {
    if (cancelled_)
      environment_["interrupted"] = {{"signal", stop_signal_}, {"at_utc", fmt::format("{:.3f}", stop_wall_s_)}};
    keep_first(failure, [&] { write_environment(); });
    // The last reports did not know of the stop.
    if (cancelled_) keep_first(failure, [&] { write_reports(dir_); });
  }
  co_await close_launchers();
  group_.close();
  if (failure) std::rethrow_exception(dir_.empty() ? nothing_written(failure) : failure);
  co_return dir_;
}

std::exception_ptr runner::nothing_written(std::exception_ptr failure) const {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return std::make_exception_ptr(std::runtime_error(fmt::format(
        "{}; nothing was written (no results folder was made in {})", e.what(), opt_.results_root.string())));
  } catch (...) {
    return failure;
  }
}

asio::awaitable<void> runner::settle_pause() {
  if (plan_.settle <= 0 || cancelled_) co_return;
  pause_.expires_after(std::chrono::milliseconds(static_cast<long>(plan_.settle * 1e3)));
  co_await pause_.async_wait(asio::as_tuple(use_awaitable));
}

asio::awaitable<void> runner::run_one(const run_spec& r) {
  if (cancelled_) co_return;
  const fs::path run_dir = dir_ / "raw" / r.id;
  fs::create_directories(run_dir);
  const std::string of_n = progress_ ? fmt::format("{} of {}: ", progress_->index() + 1, progress_->count()) : "";
  // Plan names and program messages are escaped on the console.
  fmt::print(stderr, "harness: run {}{} ({}, {} -m {}, {} instance(s), {} s)\n", of_n, nb::printable(r.id),
             nb::printable(r.role), nb::to_string(r.kind), r.message_size, r.instances.size(), r.duration);
  std::vector<running_server> servers;
  nlohmann::json spec = to_json(r, plan_);
  spec["order"] = order_++;
  std::exception_ptr failure;
  try {
    co_await start_servers(r, servers);
    const auto before = circuit_counters();
    co_await run_instances(r, servers, spec, run_dir);
    if (lab_) {
      spec["circuit"] = circuit_delta(before, circuit_counters());
      write_json(run_dir / "run.json", spec);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  end_live();
  co_await stop_servers(servers);
  // Stopped before its end: its measurements are in raw/ already.
  if (cancelled_ && !(spec.contains("t0") && stop_wall_s_ >= spec["t0"].get<double>() + r.duration)) {
    record_interrupted_run(run_dir, std::move(spec), r.duration);
    write_environment();
    write_reports(dir_);
    co_return;
  }
  const bool measured = !failure;
  keep_first(failure, [&] { write_environment(); });
  if (failure && !cancelled_) {
    try {
      std::rethrow_exception(failure);
    } catch (const write_error&) {
      throw;
    } catch (const std::exception& e) {
      fmt::print(stderr, "harness: run {} failed: {}\n", nb::printable(r.id), nb::printable_bounded(e.what(), 1000));
      record_failed_run(run_dir, spec, e.what());
      failure = nullptr;
    }
  }
  if (failure) std::rethrow_exception(failure);
  const auto summaries = write_reports(dir_);
  (void)summaries;
  if (progress_) progress_->part_done(r.duration, nb::ns_to_s(nb::wall_ns()), measured);
}

void runner::record_failed_run(const fs::path& run_dir, nlohmann::json spec, const std::string& why) {
  spec["error"] = why;
  write_json(run_dir / "run.json", spec);
}

void runner::record_interrupted_run(const fs::path& run_dir, nlohmann::json spec, double duration) {
  const double measured =
      spec.contains("t0") ? std::clamp(stop_wall_s_ - spec["t0"].get<double>(), 0.0, duration) : 0.0;
  spec["interrupted"] = true;
  spec["measured_s"] = measured;
  spec["error"] = measured > 0 ? fmt::format("interrupted after {:.2f} s of the run's {:g} s", measured, duration)
                               : std::string("interrupted before its start: nothing was sent");
  write_json(run_dir / "run.json", spec);
}

nlohmann::json runner::circuit_counters() const {
  return lab_ ? nlohmann::json::parse(lab::lab_counters(*lab_)) : nlohmann::json();
}

nlohmann::json circuit_delta(const nlohmann::json& before, const nlohmann::json& after) {
  auto delta = [&](const nlohmann::json::json_pointer& p) {
    return after.value(p, std::uint64_t{0}) - before.value(p, std::uint64_t{0});
  };
  std::uint64_t limited = 0, shaped = 0, delivered = 0;
  for (const char* d : {"to_onprem", "to_vpc"}) {
    limited += delta(nlohmann::json::json_pointer(fmt::format("/circuit/nft/{}_dropped/packets", d)));
    shaped += delta(nlohmann::json::json_pointer(fmt::format("/circuit/tbf_{}/drops", d)));
  }
  for (const auto& [name, host] : after.at("hosts").items())
    delivered += delta(nlohmann::json::json_pointer(fmt::format("/hosts/{}/udp_delivered/packets", name)));
  return {{"limit_dropped", limited}, {"shaper_dropped", shaped}, {"udp_delivered", delivered}};
}

void runner::print_live(const run_spec& r, const std::vector<live_instance>& live, double t0) {
  if (!opt_.live) return;
  std::vector<instance_progress> each;
  for (const auto& l : live) each.push_back({l.running, l.failed, &l.intervals});
  const live_totals t = live_aggregate(each);
  const double now = nb::ns_to_s(nb::wall_ns());
  last_live_ = aggregate_line(r.id, std::max(0.0, now - t0), r.duration, t, live_shown_);
  if (t.known) live_shown_ = t.interval;
  if (!terminal_ || cancelled_ || !progress_) {
    fmt::print(stderr, "{}\n", last_live_);
    return;
  }
  const std::string head = plan_line(plan_.name, progress_->index(), progress_->count(), r.id, now - plan_started_,
                                     progress_->eta(now), now, utc_offset_s(now));
  fmt::print(stderr, "{}", block_.draw({head, last_live_}, stderr_columns()));
}

// The scrollback keeps one plain line per run: its last aggregate.
void runner::end_live() {
  if (!block_.shown()) return;
  fmt::print(stderr, "{}{}\n", block_.clear(), last_live_);
}

}  // namespace harness
