#include "harness/app.hpp"

#include "harness/default_plan.hpp"
#include "harness/dry_run.hpp"
#include "harness/launcher.hpp"
#include "harness/report.hpp"
#include "harness/results.hpp"
#include "harness/runner.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/signal_set.hpp>
#include <fmt/format.h>

#include <csignal>

namespace harness {

namespace {

plan load(const run_request& req) {
  if (req.plan_path.empty()) return parse_plan(default_plan_text, "configs/loopback.toml (embedded)");
  return load_plan(req.plan_path);
}

}  // namespace

int run_plan(const run_request& req) {
  const plan p = load(req);
  const std::string bin_dir = find_local_bin_dir(req.self_exe, req.bin_dir);
  if (req.dry_run) {
    fmt::print("{}", dry_run(p, bin_dir));
    return 0;
  }
  asio::io_context io;
  runner r(io, p, {req.results_root, bin_dir, req.live});
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code ec, int sig) {
    if (ec) return;
    fmt::print(stderr, "harness: signal {}: stopping every process\n", sig);
    r.cancel();
  });
  std::filesystem::path dir;
  std::exception_ptr failure;
  asio::co_spawn(io, r.run_all(), [&](std::exception_ptr e, std::filesystem::path d) {
    failure = e;
    dir = std::move(d);
    signals.cancel();
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
  const auto summaries = load_raw(dir);
  std::vector<run_summary> s;
  bool all_ok = true;
  for (auto rec : summaries) {
    s.push_back(summarize(std::move(rec)));
    all_ok = all_ok && s.back().ok;
  }
  fmt::print("{}\nresults: {}\n", console_summary(s, load_searches(dir)), dir.string());
  return all_ok ? 0 : 3;
}

int rebuild_reports(const std::filesystem::path& dir) {
  const auto s = write_reports(dir);
  bool all_ok = true;
  for (const auto& x : s) all_ok = all_ok && x.ok;
  fmt::print("{}\nreports rebuilt in {}\n", console_summary(s, load_searches(dir)), dir.string());
  return all_ok ? 0 : 3;
}

}  // namespace harness
