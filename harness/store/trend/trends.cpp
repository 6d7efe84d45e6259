#include "harness/store/trend/trends.hpp"

#include "harness/report/html/html.hpp"
#include "harness/store/record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace harness::store {

namespace {

// Letters, digits and - . _ only.
std::string chart_name(const series& s) {
  std::string out = "history-" + s.plan + "-" + s.measurement + (s.role.empty() ? "" : "-" + s.role);
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') c = '_';
  return out;
}

std::string title_of(const series& s) {
  return fmt::format("{}: test {}, {}, {} B{}", s.measurement, s.test, s.role, s.message_size,
                     s.route.empty() ? "" : ", " + s.route);
}

std::string plan_section(database& db, const std::string& plan, const std::vector<const series*>& all,
                         const regression_options& o, int& next_id) {
  const std::string marked = marked_baseline(db, plan);
  std::string out =
      fmt::format("<h2>Plan {}</h2>\n<p class=\"note\">Baseline: {}.</p>\n", html::escape(plan),
                  marked.empty() ? fmt::format("the up to {} folders before each one", o.baseline_runs)
                                 : html::escape("the folder marked with `harness db baseline`: " + marked));
  for (const series* s : all) {
    const trend t = trend_of(*s, marked, o);
    out += fmt::format("<h3>{}</h3>\n", html::escape(t.title));
    std::vector<std::string> notes;
    for (const auto& c : s->changes)
      notes.push_back(fmt::format("level shift {:+.1f} % ({} to {} mean) began at {}, seen at {}", c.change_percent(),
                                  html::pps(c.before), html::pps(c.after), html::escape(s->points[c.begins].folder),
                                  html::escape(s->points[c.detected].folder)));
    for (const auto& p : t.points)
      if (p.regression) notes.push_back(fmt::format("regression at {}", html::escape(p.folder)));
    if (auto c = trend_chart(t, true, fmt::format("h{}", ++next_id))) out += html::figure(*c);
    else if (std::any_of(s->points.begin(), s->points.end(),
                         [](const history_point& p) { return p.pdr_pps || p.mrr_pps; }))
      out +=
          "<p class=\"note\">A rate search: its MRR, NDR and PDR per folder are in `harness history`; not drawn.</p>\n";
    else out += "<p class=\"note\">No folder with figures (every run failed).</p>\n";
    if (!notes.empty()) out += fmt::format("<ul>\n<li>{}</li>\n</ul>\n", fmt::join(notes, "</li>\n<li>"));
  }
  return out;
}

}  // namespace

trend trend_of(const series& s, const std::string& marked, const regression_options& o, const std::string& current,
               int last_n) {
  trend t{chart_name(s), title_of(s), {}};
  std::size_t end = s.points.size();
  if (!current.empty())
    for (std::size_t i = 0; i < s.points.size(); ++i)
      if (s.points[i].path == current) {
        end = i + 1;
        break;
      }
  std::size_t first = end, shown = 0;
  while (first > 0 && (last_n <= 0 || shown < static_cast<std::size_t>(last_n)))
    if (s.points[--first].received_pps.n > 0) ++shown;
  const auto verdicts = judge_points(s, first, end, marked, o);
  for (std::size_t i = first; i < end; ++i) {
    const history_point& p = s.points[i];
    if (p.received_pps.n == 0) continue;
    const auto& j = verdicts[i - first];
    const auto* c = s.change_at(i);
    t.points.push_back({p.folder, p.started_utc, p.received_pps, p.received_bps, p.path == current, j && j->regression,
                        c != nullptr, c ? c->change_percent() : 0});
  }
  return t;
}

std::string history_page(database& db, const std::vector<series>& all, const history_filter& f,
                         const regression_options& o) {
  return db.guarded([&] {
    std::map<std::string, std::vector<const series*>> by_plan;
    for (const auto& s : all) by_plan[s.plan].push_back(&s);
    std::vector<std::string> filters;
    if (!f.plan.empty()) filters.push_back("plan " + f.plan);
    if (!f.test.empty()) filters.push_back("test " + f.test);
    if (f.since_utc) filters.push_back("since " + utc_text(*f.since_utc) + " UTC");
    std::string body = fmt::format(
        "<h1>History: {}</h1>\n<p class=\"lede\">{} measurement(s) of {} plan(s){}. A level shift is found by a self-starting "
        "two-sided CUSUM on each measurement's received pps (k = 0.5, h = 5: an in-control average run length of about {:.0f} "
        "folders, so a steady measurement is falsely marked about once in that many); a regression is a folder below its "
        "baseline's 95 % interval by at least {:g} %.</p>\n",
        html::escape(db.path().string()), all.size(), by_plan.size(),
        filters.empty() ? "" : html::escape(" (" + fmt::format("{}", fmt::join(filters, ", ")) + ")"),
        cusum_in_control_arl, o.min_change_percent);
    if (all.empty()) body += "<p>No runs in the store match.</p>\n";
    int next_id = 0;
    for (const auto& [plan, series_of_plan] : by_plan) body += plan_section(db, plan, series_of_plan, o, next_id);
    return html::page(fmt::format("History: {}", db.path().filename().string()), body);
  });
}

run_history history_of_run(database& db, const std::string& folder, const regression_options& o,
                           const std::vector<series>* plan_history) {
  return db.guarded([&] {
    run_history h{true, "", report_history_runs, {}};
    std::optional<stored_folder> f;
    try {
      f = find_folder(db, folder);
    } catch (const store_error& e) {
      return run_history{false, e.what(), 0, {}};
    }
    const std::string plan = f->plan;
    const std::string marked = marked_baseline(db, plan);
    std::vector<std::string> single;
    std::vector<series> read;
    if (!plan_history) read = read_history(db, {plan, "", std::nullopt});
    for (const auto& s : plan_history ? *plan_history : read) {
      trend t = trend_of(s, marked, o, f->path, report_history_runs);
      const bool has_current =
          std::any_of(t.points.begin(), t.points.end(), [](const trend_point& p) { return p.current; });
      if (!has_current) continue;
      if (t.points.size() >= 2) h.trends.push_back(std::move(t));
      else single.push_back(s.measurement);
    }
    if (!single.empty())
      h.note = fmt::format("First run of {} in the results database: no history to draw yet", fmt::join(single, ", "));
    return h;
  });
}

}  // namespace harness::store
