#include "harness/report/compare.hpp"

#include "harness/report/report.hpp"
#include "harness/report/results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

std::string to_string(verdict v) {
  switch (v) {
    case verdict::better: return "better";
    case verdict::worse: return "worse";
    case verdict::no_difference: return "no difference the repeats can show";
    case verdict::one_run: return "one run: no interval";
    case verdict::no_ok_run: return "no ok run";
    case verdict::mixed: return "mixed";
  }
  return "?";
}

difference welch_difference(const spread& a, const spread& b) {
  difference d;
  d.diff = b.mean - a.mean;
  d.low = d.high = d.diff;
  if (!a.has_interval() || !b.has_interval()) return d;  // one number on a side: no spread
  d.has_interval = true;
  const double va = a.sd * a.sd / a.n, vb = b.sd * b.sd / b.n, se = std::sqrt(va + vb);
  if (se == 0) {
    // The very same figure repeated on both sides: the difference is exact.
    d.dof = a.n + b.n - 2;
  } else {
    d.dof = (va + vb) * (va + vb) / (va * va / (a.n - 1) + vb * vb / (b.n - 1));
    // Rounded down: a wider interval, never a claim the data cannot carry.
    const double half = student_t95(std::max(1, static_cast<int>(std::floor(d.dof + 1e-9)))) * se;
    d.low = d.diff - half;
    d.high = d.diff + half;
  }
  d.judged = d.low > 0 ? verdict::better : d.high < 0 ? verdict::worse : verdict::no_difference;
  return d;
}

double change_percent(const spread& a, const spread& b) {
  if (a.n == 0 || b.n == 0 || a.mean == 0) return std::numeric_limits<double>::quiet_NaN();
  return (b.mean - a.mean) / a.mean * 100;
}

namespace {

compare_row row_of(const repeat_group& a, const repeat_group& b) {
  compare_row r;
  r.a = a;
  r.b = b;
  r.pps = welch_difference(a.received_pps, b.received_pps);
  r.bps = welch_difference(a.received_bps, b.received_bps);
  r.pps_change = change_percent(a.received_pps, b.received_pps);
  r.bps_change = change_percent(a.received_bps, b.received_bps);
  if (r.pps.judged == r.bps.judged) {
    r.judged = r.pps.judged;
    r.verdict_text = to_string(r.judged);
  } else {
    r.judged = verdict::mixed;
    r.verdict_text = fmt::format("pps: {}; Mbit/s: {}", to_string(r.pps.judged), to_string(r.bps.judged));
  }
  // No ok run: no difference (NaN, null in JSON), never one against a zero mean.
  if (a.ok_runs() == 0 || b.ok_runs() == 0) {
    for (difference* d : {&r.pps, &r.bps}) {
      d->diff = d->low = d->high = std::numeric_limits<double>::quiet_NaN();
      d->judged = verdict::no_ok_run;
    }
    r.judged = verdict::no_ok_run;
    r.verdict_text = fmt::format("no ok run in {}", a.ok_runs() == 0 ? "A" : "B");
  }
  return r;
}

std::string label(const repeat_group& g) { return g.load.empty() ? g.key : fmt::format("{} ({})", g.key, g.load); }

}  // namespace

comparison compare_groups(const std::vector<repeat_group>& a, const std::vector<repeat_group>& b) {
  comparison c;
  std::vector<bool> matched(b.size(), false);
  for (const auto& ga : a) {
    std::size_t k = 0;
    while (k < b.size() && (matched[k] || !same_measurement(ga, b[k]))) ++k;
    if (k == b.size()) {
      c.only_in_a.push_back(label(ga));
      continue;
    }
    matched[k] = true;
    c.rows.push_back(row_of(ga, b[k]));
  }
  for (std::size_t k = 0; k < b.size(); ++k)
    if (!matched[k]) c.only_in_b.push_back(label(b[k]));
  return c;
}

std::vector<comparison> compare_folders(const std::vector<fs::path>& dirs) {
  if (dirs.size() < 2) throw std::runtime_error("compare needs two results folders at least");
  std::vector<std::vector<repeat_group>> groups;
  for (const auto& dir : dirs) {
    if (!fs::is_directory(dir)) throw std::runtime_error(fmt::format("{}: no such folder", dir.string()));
    std::vector<run_summary> summaries;
    for (auto& r : load_raw(dir)) summaries.push_back(summarize(std::move(r)));
    groups.push_back(group_repeats(summaries));
  }
  std::vector<comparison> out;
  for (std::size_t k = 1; k < dirs.size(); ++k) {
    out.push_back(compare_groups(groups.front(), groups[k]));
    out.back().a_name = dirs.front().string();
    out.back().b_name = dirs[k].string();
  }
  return out;
}

namespace {

// "1 234 567 ± 12 345"
std::string change_cell(double pct) { return std::isnan(pct) ? "n/a" : fmt::format("{:+.2f} %", pct); }

std::string mbps(double bps) { return fmt_mbps(bps); }

text_table table_of(const comparison& c, const char* plus_minus) {
  const bool loads = std::any_of(c.rows.begin(), c.rows.end(), [](const compare_row& r) { return !r.a.load.empty(); });
  std::vector<std::string> headers{"test", "role", "m"};
  if (loads) headers.push_back("load per instance");
  for (const char* h : {"recv pps A", "recv pps B", "change", "recv Mbit/s A", "recv Mbit/s B", "change", "verdict"})
    headers.push_back(h);
  text_table t(headers);
  constexpr auto whole = [](double v) { return fmt_thousands(v); };
  const std::string between = fmt::format(" {} ", plus_minus);
  for (const auto& r : c.rows) {
    std::vector<std::string> row{r.a.test, r.a.route.empty() ? r.a.role : r.a.route, std::to_string(r.a.message_size)};
    if (loads) row.push_back(r.a.load.empty() ? "unpaced" : r.a.load);
    for (auto cell :
         {fmt_mean_interval(r.a.received_pps, whole, between, "FAILED"),
          fmt_mean_interval(r.b.received_pps, whole, between, "FAILED"), change_cell(r.pps_change),
          fmt_mean_interval(r.a.received_bps, mbps, between, "FAILED"),
          fmt_mean_interval(r.b.received_bps, mbps, between, "FAILED"), change_cell(r.bps_change), r.verdict_text})
      row.push_back(std::move(cell));
    t.add(std::move(row));
  }
  return t;
}

std::string only_lines(const comparison& c, const char* bullet) {
  std::string out;
  for (const auto& k : c.only_in_a) out += fmt::format("{}only in A: {}\n", bullet, k);
  for (const auto& k : c.only_in_b) out += fmt::format("{}only in B: {}\n", bullet, k);
  return out;
}

}  // namespace

std::string compare_console(const std::vector<comparison>& cs) {
  std::string out;
  for (const auto& c : cs) {
    out += fmt::format("\nA (baseline): {}\nB:            {}\n", c.a_name, c.b_name);
    const auto t = table_of(c, "+-");
    out += t.empty() ? "no measurement in both\n" : t.text();
    out += only_lines(c, "  ");
  }
  return out;
}

std::string compare_markdown(const std::vector<comparison>& cs) {
  std::string out =
      "# Comparison\n\nReceived pps and Mbit/s of the run sums: the mean over the ok runs of each measurement, ± the "
      "half-width of its 95 % confidence interval (Student's t) when it was run at least twice. The verdict is "
      "better or worse only when the 95 % confidence interval of B's mean minus A's (Welch's t) lies wholly above "
      "or below zero; with one run on a side there is no interval, and no verdict.\n\n";
  for (const auto& c : cs) {
    out += fmt::format("## {} against {}\n\nA (baseline): `{}`  \nB: `{}`\n\n", fs::path(c.b_name).filename().string(),
                       fs::path(c.a_name).filename().string(), c.a_name, c.b_name);
    const auto t = table_of(c, "±");
    out += t.empty() ? "No measurement in both.\n" : t.markdown();
    const std::string only = only_lines(c, "- ");
    out += only.empty() ? "\n" : "\n" + only + "\n";
  }
  return out;
}

namespace {
json difference_json(const difference& d, double change) {
  return {{"diff", std::isnan(d.diff) ? json() : json(d.diff)},
          {"ci95_low", d.has_interval ? json(d.low) : json()},
          {"ci95_high", d.has_interval ? json(d.high) : json()},
          {"dof", d.has_interval ? json(d.dof) : json()},
          {"change_percent", std::isnan(change) ? json() : json(change)},
          {"verdict", to_string(d.judged)}};
}
}  // namespace

json to_json(const compare_row& r) {
  return {{"test", r.a.test},
          {"role", r.a.role},
          {"message_size", r.a.message_size},
          {"load", r.a.load.empty() ? json() : json(r.a.load)},
          {"route", r.a.route.empty() ? json() : json(r.a.route)},
          {"a", to_json(r.a)},
          {"b", to_json(r.b)},
          {"received_pps", difference_json(r.pps, r.pps_change)},
          {"received_bps", difference_json(r.bps, r.bps_change)},
          {"verdict", to_string(r.judged)},
          {"verdict_text", r.verdict_text}};
}

json to_json(const std::vector<comparison>& cs) {
  json out = {{"schema", "harness.compare/1"}, {"comparisons", json::array()}};
  for (const auto& c : cs) {
    json rows = json::array();
    for (const auto& r : c.rows) rows.push_back(to_json(r));
    out["comparisons"].push_back(
        {{"a", c.a_name}, {"b", c.b_name}, {"rows", rows}, {"only_in_a", c.only_in_a}, {"only_in_b", c.only_in_b}});
  }
  return out;
}

}  // namespace harness
