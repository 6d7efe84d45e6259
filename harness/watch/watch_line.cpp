#include "harness/watch/watch_line.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstring>

namespace harness::watch {

namespace {

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// When and why then: the next run starts `every` after the previous start, or at once after the previous
// end when that run took longer than `every`; the line says which.
std::string head(const run_timing& t) {
  const auto utc = fmt::gmtime(static_cast<std::time_t>(t.started_unix));
  std::string out = fmt::format("run {} at {:%Y-%m-%dT%H:%M:%SZ}", t.number, utc);
  if (t.number == 1) return out;
  if (t.previous_took >= t.every)
    return out + fmt::format(", at once after run {} ended (it took {:.2f} s, longer than --every {} s)", t.number - 1,
                             seconds(t.previous_took), t.every.count());
  return out + fmt::format(", {:.2f} s after run {} started", seconds(t.since_previous_start), t.number - 1);
}

// Each run's received rate, as measured (no baseline to hold it against).
std::string measured(const finished_run& f) {
  std::vector<std::string> parts;
  for (const auto& s : f.runs)
    if (s.ok && !is_search_trial(s.run)) parts.push_back(fmt::format("{} received {:.1f} pps", s.run.id, s.receiver.pps));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// Each judged measurement against its baseline (only the regressions, or all).
std::string judged_figures(const store::judgement& j, bool regressions_only) {
  std::vector<std::string> parts;
  for (const auto& m : j.measurements)
    if (!regressions_only || m.regression)
      parts.push_back(fmt::format("{} ({}) received {:.1f} pps against {:.1f} ({:+.1f} %)", m.measurement, m.role,
                                  m.current.mean, m.baseline.mean, m.change_percent));
  if (!regressions_only && !j.without_baseline.empty())
    parts.push_back(fmt::format("{} without a baseline yet", j.without_baseline.size()));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string verdict(const finished_run& f) {
  if (f.signal)
    return fmt::format("INTERRUPTED by SIG{}, recorded as interrupted", sigabbrev_np(f.signal) ? sigabbrev_np(f.signal) : "?");
  std::string state = "ok";
  if (f.status == 3 || std::any_of(f.runs.begin(), f.runs.end(), [](const run_summary& s) { return !s.ok; })) {
    const auto failed = std::count_if(f.runs.begin(), f.runs.end(), [](const run_summary& s) { return !s.ok; });
    state = fmt::format("FAILED ({} of {} run(s) failed, see stderr)", failed, f.runs.size());
  }
  if (!f.verdict) return fmt::format("{}, not judged (not recorded in a results database): {}", state, measured(f));
  const auto& j = *f.verdict;
  if (j.any_regression())
    return fmt::format("REGRESSION against {}: {}{}", j.baseline_kind, judged_figures(j, true), state == "ok" ? "" : "; " + state);
  if (j.measurements.empty()) return fmt::format("{}, no baseline yet: {}", state, measured(f));
  return fmt::format("{}, no regression against {}: {}", state, j.baseline_kind, judged_figures(j, false));
}

}  // namespace

std::string run_line(const run_timing& t, const finished_run& f) {
  return fmt::format("{}: {}: {}", head(t), f.dir.filename().string(), verdict(f));
}

std::string error_line(const run_timing& t, const std::string& error) {
  return fmt::format("{}: ERROR, the run did not start: {}", head(t), error);
}

}  // namespace harness::watch
