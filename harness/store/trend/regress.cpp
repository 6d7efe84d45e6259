#include "harness/store/trend/regress.hpp"

#include "core/base/text.hpp"
#include "harness/store/history.hpp"
#include "harness/store/record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

using nlohmann::json;

namespace harness::store {

namespace {

std::vector<double> received(const history_point& p) {
  std::vector<double> v;
  for (const auto& r : p.runs)
    if (r.ok && r.received_pps) v.push_back(*r.received_pps);
  return v;
}

judged judge_against(const series& s, std::size_t at, const std::vector<std::size_t>& base) {
  judged j{s.measurement, s.test,       s.role, s.route, s.message_size, s.points[at].received_pps, {}, {}, 0,
           false,         std::nullopt, ""};
  std::vector<double> baseline_figures;
  for (const std::size_t k : base) {
    j.baseline_folders.push_back(s.points[k].folder);
    for (double v : received(s.points[k])) baseline_figures.push_back(v);
  }
  j.baseline = describe(baseline_figures);
  if (j.baseline.mean > 0) j.change_percent = (j.current.mean - j.baseline.mean) / j.baseline.mean * 100;
  return j;
}

void decide(judged& j, const regression_options& o) {
  const double floor = j.baseline.has_interval() ? j.baseline.ci_low : j.baseline.mean;
  j.regression = j.current.mean < floor && -j.change_percent >= o.min_change_percent;
}

std::optional<judged> judge_series(const series& s, const std::string& folder, const std::string& marked,
                                   const regression_options& o, std::vector<std::string>& without) {
  const auto it =
      std::find_if(s.points.begin(), s.points.end(), [&](const history_point& p) { return p.path == folder; });
  if (it == s.points.end() || it->received_pps.n == 0) return std::nullopt;
  const auto at = static_cast<std::size_t>(it - s.points.begin());
  auto j = judge_point(s, at, marked, o);
  if (!j) {
    without.push_back(fmt::format("{} ({})", s.measurement, s.role));
    return j;
  }
  if (const auto shifts = level_shifts(s.points, at + 1); !shifts.empty()) {
    j->shift = shifts.back();
    j->shift_begins = s.points[shifts.back().begins].folder;
  }
  return j;
}

}  // namespace

std::string marked_baseline(database& db, const std::string& plan) {
  SQLite::Statement st(db.sql(), "SELECT folder FROM baselines WHERE plan = ?");
  st.bind(1, plan);
  return st.executeStep() ? st.getColumn(0).getString() : std::string();
}

namespace {

std::optional<std::size_t> marked_index(const series& s, const std::string& marked) {
  if (marked.empty()) return std::nullopt;
  for (std::size_t i = 0; i < s.points.size(); ++i)
    if (s.points[i].path == marked) return i;
  return s.points.size();  // not in this series: no baseline
}

}  // namespace

std::vector<std::optional<judged>> judge_points(const series& s, std::size_t first, std::size_t end,
                                                const std::string& marked, const regression_options& o) {
  end = std::min(end, s.points.size());
  const auto m = marked_index(s, marked);
  std::vector<std::optional<judged>> out;
  // Rolling baseline: the last N earlier ok folders not themselves regressions, so a lasting drop stays
  // flagged until a new mark. Each verdict depends on those before: all judged in order.
  std::vector<std::size_t> eligible;
  for (std::size_t i = 0; i < end; ++i) {
    const history_point& p = s.points[i];
    std::optional<judged> j;
    if (p.received_pps.n > 0) {
      const bool against_mark = m && *m != i;
      std::vector<std::size_t> base;
      if (against_mark && *m < s.points.size() && s.points[*m].received_pps.n > 0) base = {*m};
      else if (!against_mark)
        base.assign(
            eligible.end() - std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(eligible.size()), o.baseline_runs),
            eligible.end());
      std::reverse(base.begin(), base.end());  // the latest first
      if (!base.empty()) {
        j = judge_against(s, i, base);
        decide(*j, o);
      }
      // A verdict against the mark never keeps a folder out of the rolling baseline.
      const bool rolling_regression = against_mark ? false : j && j->regression;
      if (p.status == "ok" && !rolling_regression) eligible.push_back(i);
    }
    if (i >= first) out.push_back(std::move(j));
  }
  return out;
}

std::optional<judged> judge_point(const series& s, std::size_t at, const std::string& marked,
                                  const regression_options& o) {
  return std::move(judge_points(s, at, at + 1, marked, o).at(0));
}

bool judgement::any_regression() const {
  return std::any_of(measurements.begin(), measurements.end(), [](const judged& m) { return m.regression; });
}

judgement judge_folder(database& db, const std::string& folder, const regression_options& o,
                       std::vector<series>* plan_history) {
  return db.guarded([&] {
    const stored_folder f = find_folder(db, folder);
    judgement out;
    out.folder = f.name;
    out.plan = f.plan;
    const std::string marked = marked_baseline(db, out.plan);
    out.baseline_kind = marked.empty() || marked == f.path
                            ? fmt::format("up to {} earlier results folders of the plan", o.baseline_runs)
                            : fmt::format("the marked baseline {}", folder_name(marked));
    auto history = read_history(db, {out.plan, "", std::nullopt});
    for (const auto& s : history)
      if (auto j = judge_series(s, f.path, marked, o, out.without_baseline)) out.measurements.push_back(std::move(*j));
    if (plan_history) *plan_history = std::move(history);
    return out;
  });
}

std::string mark_baseline(database& db, const std::string& folder) {
  return db.guarded([&] {
    const stored_folder f = find_folder(db, folder);
    if (f.status != "ok")
      throw store_error(
          fmt::format("results folder {} is {} ({}): it cannot be the baseline; mark a folder whose runs all "
                      "completed and started on time",
                      f.path, f.status, f.error.empty() ? "no error recorded" : f.error));
    SQLite::Statement st(db.sql(), "INSERT OR REPLACE INTO baselines (plan, folder, marked_utc) VALUES (?, ?, ?)");
    st.bind(1, f.plan);
    st.bind(2, f.path);
    st.bind(3, std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
    st.exec();
    return f.plan;
  });
}

std::string judgement_text(const judgement& j) {
  using nb::printable;  // no raw control byte from a folder reaches the terminal
  std::string out;
  for (const auto& m : j.measurements) {
    const std::string interval = m.baseline.has_interval()
                                     ? fmt::format(", 95 % {:.1f} to {:.1f}", m.baseline.ci_low, m.baseline.ci_high)
                                     : std::string();
    out += fmt::format("{}: {} ({}): received {:.1f} pps against {:.1f} ({} run(s) in {} folder(s), {}{}): {:+.1f} %\n",
                       m.regression ? "REGRESSION" : "no regression", printable(m.measurement), printable(m.role),
                       m.current.mean, m.baseline.mean, m.baseline.n, m.baseline_folders.size(),
                       printable(j.baseline_kind), interval, m.change_percent);
    if (m.shift)
      out += fmt::format("  level shift: {:+.1f} % ({:.1f} to {:.1f} pps) began at {} (CUSUM change point)\n",
                         m.shift->change_percent(), m.shift->before, m.shift->after, printable(m.shift_begins));
  }
  for (const auto& w : j.without_baseline) out += fmt::format("no baseline yet: {}\n", printable(w));
  return out;
}

json to_json(const judgement& j, const regression_options& o) {
  json out = {{"schema", "harness.regressions/1"},
              {"folder", j.folder},
              {"plan", j.plan},
              {"baseline", j.baseline_kind},
              {"baseline_runs", o.baseline_runs},
              {"min_change_percent", o.min_change_percent},
              {"regression", j.any_regression()},
              {"measurements", json::array()},
              {"without_baseline", j.without_baseline}};
  for (const auto& m : j.measurements)
    out["measurements"].push_back(
        {{"measurement", m.measurement},
         {"test", m.test},
         {"role", m.role},
         {"message_size", m.message_size},
         {"route", m.route},
         {"received_pps", to_json(m.current)},
         {"baseline_received_pps", to_json(m.baseline)},
         {"baseline_folders", m.baseline_folders},
         {"change_percent", m.change_percent},
         {"regression", m.regression},
         {"level_shift", m.shift ? shift_json(*m.shift, "begins_at", m.shift_begins) : json(nullptr)}});
  return out;
}

}  // namespace harness::store
