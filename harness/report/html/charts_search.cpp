#include "harness/report/html/charts.hpp"
#include "harness/report/html/gnuplot.hpp"
#include "harness/report/search_view.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness {
namespace {

using nlohmann::json;
using search_rows = std::vector<std::vector<std::string>>;

constexpr const char* goal_colours[] = {"#188038", "#d93025", "#9334e6", "#12b5cb", "#795548"};

std::string search_num(double v) { return fmt::format("{:.6g}", v); }

struct search_points {
  search_rows shorter, full, limited, mrr;
  double lo = 0, hi = 0;
  void span(double v) {
    if (v > 0) lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
};

// Open: shorter than the longest final trial; a cross: load-limited (it does not count).
search_points points_of(const json& sr) {
  search_points p;
  double final_s = 0;
  for (const json& r : sr.at("goal_results"))
    final_s = std::max(final_s, number_or(r.at("goal"), "final_trial_duration"));
  for (const json& t : sr.at("trials")) {
    if (!t.value("ran", false) || t.value("phase", "") == "latency") continue;
    const bool unpaced = t.value("unpaced", false);
    const double load = unpaced ? number_or(t, "offered_rate") : number_or(t, "intended_load");
    std::vector<std::string> row{search_num(load), search_num(number_or(t, "loss_ratio"))};
    p.span(load);
    if (unpaced) p.mrr.push_back(row);
    else if (t.value("load_limited", false)) p.limited.push_back(row);
    else (number_or(t, "trial_duration") >= final_s ? p.full : p.shorter).push_back(row);
  }
  return p;
}

}  // namespace

std::optional<chart> search_chart(const json& search, const std::string& id) {
  const json& sr = search.at("search");
  if (!is_goal_search(sr)) return std::nullopt;
  const search_points p = points_of(sr);
  if (p.shorter.empty() && p.full.empty() && p.limited.empty() && p.mrr.empty()) return std::nullopt;
  std::string script =
      "set grid ytics lc rgb '#dddddd'\nset border 3\nset tics nomirror\nset key outside top center horizontal\n";
  std::string plot;
  auto series = [&](const char* name, const search_rows& rows, const char* style, const char* title) {
    if (rows.empty()) return;
    script += gp_datablock(name, rows);
    plot += fmt::format("{}${} using 1:2 {} title '{}'", plot.empty() ? "" : ", ", name, style, title);
  };
  series("F", p.full, "with points pt 7 ps 0.9 lc rgb '#1a73e8'", "trial of the final duration");
  series("S", p.shorter, "with points pt 6 ps 0.9 lc rgb '#1a73e8'", "shorter trial");
  series("X", p.limited, "with points pt 2 ps 1.1 lc rgb '#5f6368'", "load-limited (does not count)");
  series("M", p.mrr, "with points pt 5 ps 1.1 lc rgb '#e8710a'", "MRR (unpaced, at what it offered)");
  int line = 0;
  std::size_t k = 0;
  for (const json& r : sr.at("goal_results")) {
    const char* colour = goal_colours[k++ % std::size(goal_colours)];
    const std::string name = r.at("goal").value("name", "");
    const double ratio = number_or(r.at("goal"), "loss_ratio");
    if (ratio > 0)
      script += fmt::format("set arrow {} from graph 0, first {} to graph 1, first {} nohead lw 1 dt 3 lc rgb '{}'\n",
                            ++line, search_num(ratio), search_num(ratio), colour);
    for (const auto& [key, word, dash] :
         {std::tuple{"relevant_lower_bound", "lower", 2}, std::tuple{"relevant_upper_bound", "upper", 4}}) {
      const auto it = r.find(key);
      if (it == r.end() || !it->is_number()) continue;
      const double at = it->get<double>();
      script += fmt::format(
          "set arrow {} from first {}, graph 0 to first {}, graph 1 nohead lw 1.5 dt {} lc rgb '{}'\n"
          "set label {} {} at first {}, graph {} rotate by 90 offset -0.6,0 right tc rgb '{}'\n",
          ++line, search_num(at), search_num(at), dash, colour, line, gp_quote(name + " " + word), search_num(at),
          0.98 - 0.12 * static_cast<double>(k - 1), colour);
    }
  }
  const bool log = p.lo > 0 && p.hi / p.lo > 30;
  script += fmt::format(
      "{}set format x '{}'\nset xlabel 'intended load, packets per second (aggregate: {})'\n"
      "set ylabel 'trial loss ratio'\nset yrange [0:*]\nplot {}\n",
      log ? "set logscale x 10\n" : "", log ? "%.0s %c" : "%.1s %c", sr.value("load_conversion", ""), plot);
  chart c{
      "search",
      "Every trial of the search: its intended load against its loss ratio (filled: trials of the final duration; "
      "open: shorter ones). Dashed: each goal's relevant lower bound; long dashes: its relevant upper bound; dotted: "
      "the goal loss ratios." +
          (log ? fmt::format(" Log scale: the loads span {:.0f} to 1.", p.hi / p.lo) : std::string()),
      "", ""};
  try {
    c.svg = render_svg(script, 900, 400, id);
  } catch (const chart_error& e) {
    c.error = e.what();
  }
  return c;
}

}  // namespace harness
