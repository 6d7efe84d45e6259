#include "harness/watch/watch_line.hpp"

#include "core/base/text.hpp"
#include "harness/report/model/skew.hpp"

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
    if (s.ok && !is_search_trial(s.run))
      parts.push_back(fmt::format("{} received {:.1f} pps", s.run.id, s.receiver.pps));
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

// "ok", "SKEWED (who started late[, and N more run(s)])", or "FAILED (the first failure[, and N more
// run(s)])": what failed, not only that something did.
std::string state(const finished_run& f) {
  std::vector<const run_summary*> failed, skewed;
  for (const auto& s : f.runs)
    if (!s.ok) failed.push_back(&s);
    else if (s.skewed()) skewed.push_back(&s);
  if (failed.empty() && f.status != 3 && !skewed.empty())
    return fmt::format("SKEWED ({}: {}{})", skewed.front()->run.id, late_words(*skewed.front()),
                       skewed.size() > 1 ? fmt::format(", and {} more run(s)", skewed.size() - 1) : std::string());
  if (failed.empty() && f.status != 3) return "ok";
  if (failed.empty()) return "FAILED (a run is missing, see stderr)";
  const auto& first = *failed.front();
  const std::string why = !first.run.error.empty() ? first.run.error
                          : first.failures.empty() ? "failed"
                                                   : first.failures.front();
  return fmt::format("FAILED ({}: {}{})", first.run.id, why,
                     failed.size() > 1 ? fmt::format(", and {} more run(s)", failed.size() - 1) : std::string());
}

std::string with_figures(std::string words, const std::string& figures) {
  return figures.empty() ? words : words + ": " + figures;
}

std::string verdict(const finished_run& f) {
  if (f.signal)
    return fmt::format("INTERRUPTED by SIG{}, recorded as interrupted",
                       sigabbrev_np(f.signal) ? sigabbrev_np(f.signal) : "?");
  const std::string st = state(f);
  if (!f.verdict) return with_figures(st + ", not judged (not recorded in a results database)", measured(f));
  const auto& j = *f.verdict;
  if (j.any_regression())
    return with_figures("REGRESSION against " + j.baseline_kind, judged_figures(j, true)) +
           (st == "ok" ? "" : "; " + st);
  if (j.measurements.empty()) return with_figures(st + ", no baseline yet", measured(f));
  return with_figures(st + ", no regression against " + j.baseline_kind, judged_figures(j, false));
}

}  // namespace

// A script reads one line per run: a test name, a plan name (in the folder's) or an error from a host
// that holds a newline or a terminal escape must neither split the line nor reach the terminal raw.
std::string run_line(const run_timing& t, const finished_run& f) {
  return fmt::format("{}: {}: {}", head(t), nb::printable(f.dir.filename().string()), nb::printable(verdict(f)));
}

std::string error_line(const run_timing& t, const std::string& error) {
  return fmt::format("{}: ERROR, the run did not start: {}", head(t), nb::printable(error));
}

}  // namespace harness::watch
