#include "harness/report/html/gnuplot.hpp"
#include "harness/report/html/trend.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness {
namespace {

using data_rows = std::vector<std::vector<std::string>>;

std::string precise_num(double v) { return fmt::format("{:.9g}", v); }
// To the millisecond: ten digits before the point, more than {:.9g} keeps.
std::string when(double epoch_s) { return fmt::format("{:.3f}", epoch_s); }

// One marker per point, in exactly one plot (the render test counts them).
struct panel_data {
  data_rows plain, regressed, current, means;
};

panel_data rows_of(const trend& t, bool mbps) {
  panel_data d;
  for (const auto& p : t.points) {
    const spread& s = mbps ? p.received_bps : p.received_pps;
    const double scale = mbps ? 1e-6 : 1;
    std::vector<std::string> row = {when(p.started_utc), precise_num(s.mean * scale), precise_num(s.ci_low * scale),
                                    precise_num(s.ci_high * scale)};
    d.means.push_back({row[0], row[1]});
    (p.current ? d.current : p.regression ? d.regressed : d.plain).push_back(std::move(row));
  }
  return d;
}

std::string panel(const trend& t, bool mbps, const std::string& suffix) {
  const panel_data d = rows_of(t, mbps);
  std::string script, plot;
  const auto add = [&](const char* name, const data_rows& rows, const std::string& style) {
    if (rows.empty()) return;
    script += gp_datablock(name + suffix, rows);
    plot += fmt::format("{}${}{} using 1:2:3:4 with yerrorbars {}", plot.empty() ? "" : ", ", name, suffix, style);
  };
  add("P", d.plain, "pt 7 ps 0.8 lw 1.2 lc rgb '#1a73e8'");
  add("R", d.regressed, "pt 7 ps 1.0 lw 1.5 lc rgb '#d93025'");
  const bool current_regressed =
      std::any_of(t.points.begin(), t.points.end(), [](const trend_point& p) { return p.current && p.regression; });
  add("C", d.current, fmt::format("pt 6 ps 1.6 lw 2 lc rgb '{}'", current_regressed ? "#d93025" : "#202124"));
  if (d.means.size() >= 2) {
    script += gp_datablock("M" + suffix, d.means);
    plot += fmt::format(", $M{} using 1:2 with lines lw 1 lc rgb '#9aa0a6'", suffix);
  }
  return script + fmt::format("set ylabel {}\nplot {}\n", gp_quote(mbps ? "received Mbit/s" : "received pps"), plot);
}

std::string shift_marks(const trend& t) {
  std::string out;
  int k = 0;
  for (const auto& p : t.points)
    if (p.change_begins) {
      ++k;
      out += fmt::format(
          "set arrow {} from {}, graph 0 to {}, graph 1 nohead dt 2 lw 1.5 lc rgb '#e8710a'\n"
          "set label {} {} at {}, graph 0.95 offset 0.4,0 tc rgb '#e8710a'\n",
          k, when(p.started_utc), when(p.started_utc), k, gp_quote(fmt::format("shift {:+.0f} %", p.change_percent)),
          when(p.started_utc));
    }
  return out;
}

}  // namespace

std::optional<chart> trend_chart(const trend& t, bool with_mbps, const std::string& id) {
  if (t.points.empty()) return std::nullopt;
  const double first = t.points.front().started_utc, last = t.points.back().started_utc;
  // Tics by the second, minute or day with the span; a margin of at least 5 s, or sub-second tics print alike.
  const double margin = last > first ? std::max(5.0, (last - first) * 0.05) : 30.0;
  std::string script = fmt::format(
      "set grid ytics lc rgb '#dddddd'\nset border 3\nset tics nomirror\nunset key\nset xdata time\nset timefmt '%s'\n"
      "set format x '{}'\nset xtics rotate by -25\nset xrange [{}:{}]\nset yrange [0:*]\nset offsets 0, 0, graph 0.12, 0\n"
      "set xlabel 'started (UTC)'\nset lmargin 12\n{}",
      last - first < 86400        ? "%H:%M:%S"
      : last - first < 60 * 86400 ? "%m-%d %H:%M"
                                  : "%Y-%m-%d",
      when(first - margin), when(last + margin), shift_marks(t));
  if (with_mbps) script += "set multiplot layout 2,1\n";
  script += panel(t, false, "p");
  if (with_mbps) script += panel(t, true, "b") + "unset multiplot\n";
  chart c{
      t.name,
      fmt::format("{}: received {}per results folder over time (blue; red: a regression against its baseline{}); error "
                  "bars: the 95 % interval where the folder had repeats; grey: the means joined; dashed orange: "
                  "where a level shift began (CUSUM).",
                  t.title, with_mbps ? "pps (top) and Mbit/s (bottom) " : "pps ",
                  std::any_of(t.points.begin(), t.points.end(), [](const trend_point& p) { return p.current; })
                      ? "; ringed: this run"
                      : ""),
      "", ""};
  try {
    c.svg = render_svg(script, 900, with_mbps ? 480 : 260, id);
  } catch (const chart_error& e) {
    c.error = e.what();
  }
  return c;
}

}  // namespace harness
