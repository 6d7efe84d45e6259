#include "harness/app/app.hpp"
#include "harness/app/app_run.hpp"

#include "core/base/text.hpp"
#include "harness/app/default_plan.hpp"
#include "harness/lab/lab.hpp"
#include "harness/launch/launcher.hpp"
#include "harness/launch/stop_signals.hpp"
#include "harness/process/process.hpp"
#include "harness/records/host_check.hpp"
#include "harness/report/compare.hpp"
#include "harness/report/html/html.hpp"
#include "harness/report/model/skew.hpp"
#include "harness/report/report.hpp"
#include "harness/report/results.hpp"
#include "harness/run/dry_run.hpp"
#include "harness/run/runner.hpp"
#include "harness/store/trend/commands.hpp"

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <functional>

#include <fcntl.h>
#include <unistd.h>

namespace harness {

namespace {

// Overrides said on stderr: stdout may be a dry run's.
plan load(const run_request& req) {
  plan p = req.plan_path.empty() ? parse_plan(default_plan_text, "configs/loopback.toml (embedded)")
                                 : load_plan(req.plan_path);
  for (const auto& change : apply_overrides(p, req.overrides)) fmt::print(stderr, "harness: {}\n", change);
  return p;
}

// One line before anything starts, not one failed `ip netns exec` per host.
void require_netns_rights(const plan& p) {
  std::vector<std::string> in_netns;
  for (const auto& [name, h] : p.hosts)
    if (h.launcher == launcher_kind::netns) in_netns.push_back(name);
  if (in_netns.empty() || may_enter_netns()) return;
  const std::string more = in_netns.size() > 1 ? fmt::format(" and {} more", in_netns.size() - 1) : "";
  throw std::runtime_error(fmt::format(
      "host '{}'{} of the plan run{} in a network namespace (launcher = \"netns\"): entering one needs root (or "
      "CAP_SYS_ADMIN), which this harness does not have: run it as root",
      in_netns.front(), more, more.empty() ? "s" : ""));
}

// One line before anything starts, not one failed check per host after a results folder was made.
void require_lab_up(const plan& p) {
  if (!p.has_lab) return;
  const lab::lab_spec s = lab::load_lab(p.source_path);
  std::vector<std::string> missing;
  for (const std::string* ns : {&s.circuit_netns, &s.device.netns})
    if (!netns_exists(*ns)) missing.push_back(*ns);
  for (const auto& h : s.instances)
    if (!netns_exists(h.netns)) missing.push_back(h.netns);
  if (missing.empty()) return;
  throw std::runtime_error(fmt::format(
      "the lab of {} is not up (namespace '{}'{} missing): run `harness lab up {}` first", p.source_path,
      missing.front(), missing.size() > 1 ? fmt::format(" and {} more", missing.size() - 1) : "", p.source_path));
}

// 0: every run there and ok; 3: one failed or missing, or none; else 5: a run skewed (each said on stderr).
// said_while_running: the runner already said the runs that failed on stderr.
int status_of(const std::filesystem::path& dir, const std::vector<run_summary>& runs, bool said_while_running = false) {
  const auto problems = folder_problems(dir, runs);
  for (const auto& p : problems) {
    const bool said = said_while_running && std::any_of(runs.begin(), runs.end(), [&](const run_summary& s) {
                        return !s.run.error.empty() && p.starts_with(fmt::format("run {} failed: ", s.run.id));
                      });
    if (!said) fmt::print(stderr, "harness: {}\n", nb::printable(p));  // names from the folder's files
  }
  const auto skews = folder_skews(runs);
  for (const auto& k : skews) fmt::print(stderr, "harness: {}\n", nb::printable(k));
  return !problems.empty() ? 3 : skews.empty() ? 0 : skewed_status;
}

// A chart gnuplot could not draw: said once here, and in its place in the page.
void write_html(const std::filesystem::path& dir, const std::vector<run_summary>& runs,
                const std::vector<nlohmann::json>& searches, const run_history* history = nullptr) {
  const auto errors = write_html_report(dir, runs, searches, history);
  if (!errors.empty())
    fmt::print(stderr, "harness: report.html: {} chart(s) not drawn; the first: {}\n", errors.size(),
               nb::printable(errors.front()));
}

std::string signal_name(int sig) {
  return sigabbrev_np(sig) ? fmt::format("SIG{}", sigabbrev_np(sig)) : std::to_string(sig);
}

}  // namespace

plan load_for_run(const run_request& req) {
  plan p = load(req);
  require_netns_rights(p);
  require_lab_up(p);
  return p;
}

finished_run finish_run(const run_request& req, const runner& r, const std::filesystem::path& dir, std::FILE* out) {
  if (dir.empty()) {  // stopped before its first run
    const int sig = r.stop_signal();
    fmt::print(
        stderr,
        "harness: interrupted by {} before any run began: nothing was written (no results folder was made in {})\n",
        signal_name(sig), req.results_root.string());
    return {dir, {}, {}, 128 + sig, sig, std::nullopt};
  }
  finished_run f{dir, {}, load_searches(dir), 0, r.stop_signal(), std::nullopt};
  for (auto rec : load_raw(dir)) f.runs.push_back(summarize(std::move(rec)));
  fmt::print(out, "{}\nresults: {}\nreport: {}\n", console_summary(f.runs, f.searches), dir.string(),
             (dir / "report.html").string());
  int status = 0;
  if (const int sig = f.signal) {
    fmt::print(stderr, "harness: interrupted by {}: no run started after it; what was measured is in {}\n",
               signal_name(sig), dir.string());
    status = 128 + sig;
  } else {
    status = status_of(dir, f.runs, true);
  }
  // The store only indexes the run's files; report.html last, with its history (a signal waits meanwhile).
  const store::store_options o{
      req.db, req.record, req.fail_on_regression, {req.baseline_runs, req.min_change_percent}, out};
  const auto rec = store::record_run(o, req.results_root, dir, f.runs, f.searches, status, &f.verdict);
  write_html(dir, f.runs, f.searches, &rec.history);
  f.status = rec.status;
  return f;
}

int run_plan(const run_request& req) {
  if (req.dry_run) {
    fmt::print("{}", dry_run(load(req), find_local_bin_dir(req.self_exe, req.bin_dir)));
    return 0;
  }
  const plan p = load_for_run(req);
  const std::string bin_dir = find_local_bin_dir(req.self_exe, req.bin_dir);
  asio::io_context io;
  runner r(io, p, {req.results_root, bin_dir, req.live, req.allow_offset});
  stop_signals signals(io, "process", [&r](int sig) { r.cancel(sig); });
  const std::filesystem::path dir = nb::run_on(io, r.run_all(), [&signals] { signals.close(); });
  return finish_run(req, r, dir, stdout).status;
}

int check_plan(const run_request& req) {
  const plan p = load(req);
  asio::io_context io;
  runner r(io, p, {req.results_root, find_local_bin_dir(req.self_exe, req.bin_dir), false, req.allow_offset});
  stop_signals signals(io, "", [&r](int) { r.cancel(); });  // a second signal kills at once
  const std::vector<host_check> checks = nb::run_on(io, r.check_only(), [&signals] { signals.close(); });
  fmt::print("{}", check_table(checks));
  const bool ok = std::all_of(checks.begin(), checks.end(), [](const host_check& c) { return c.errors.empty(); });
  std::size_t warnings = 0;
  for (const auto& c : checks) warnings += c.warnings.size();
  fmt::print("{}{}\n", ok ? "every host ok" : "a host has an error: `harness run` would refuse this plan",
             warnings ? fmt::format(" ({} warning(s) above)", warnings) : "");
  return ok ? 0 : 1;
}

int rebuild_reports(const std::filesystem::path& dir) {
  const auto s = write_reports(dir);
  const auto searches = load_searches(dir);
  write_html(dir, s, searches);
  fmt::print("{}\nreports rebuilt in {}\n", console_summary(s, searches), dir.string());
  return status_of(dir, s);
}

int compare_results(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out_dir) {
  const auto c = compare_folders(dirs);
  std::filesystem::create_directories(out_dir.empty() ? "." : out_dir);
  write_file(out_dir / "compare.md", compare_markdown(c));
  write_json(out_dir / "compare.json", to_json(c));
  write_file(out_dir / "compare.html", compare_html(c));
  fmt::print("{}\ncomparison written to {}, {} and {}\n", compare_console(c), (out_dir / "compare.md").string(),
             (out_dir / "compare.json").string(), (out_dir / "compare.html").string());
  return 0;
}

}  // namespace harness
