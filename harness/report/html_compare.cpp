// compare.html: `harness compare` as a page: per later folder, the table of received pps and Mbit/s
// against the baseline with the verdicts, and one chart of the change in received pps with its 95 %
// interval per measurement.
#include "harness/report/gnuplot.hpp"
#include "harness/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

namespace harness {
namespace {

namespace h = html;

// Changes of a few tenths of a percent must be visible: whole figures here, not three significant digits.
std::string exact_pps(double v) { return h::grouped(v) + "\u00a0pps"; }
std::string exact_mbps(double bps) { return h::grouped(bps / 1e6, 2) + "\u00a0Mbit/s"; }

// "results/x" is "x" on a chart's key, where a full path would not fit.
std::string short_name(const std::string& dir) {
  const auto p = std::filesystem::path(dir).lexically_normal();
  return (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
}

std::string change(double pct) { return std::isnan(pct) ? "n/a" : fmt::format("{:+.2f}\u00a0%", pct); }

std::string verdict_cell(const compare_row& r) {
  const char* css = r.judged == verdict::better ? "good" : r.judged == verdict::worse ? "bad" : "note";
  return fmt::format("<span class=\"{}\">{}</span>", css, h::escape(r.verdict_text));
}

std::string measurement(const repeat_group& g) {
  std::string out = fmt::format("{} -m {}", g.role, g.message_size);
  if (!g.load.empty()) out += " at " + g.load;
  if (!g.route.empty()) out += " " + g.route;
  return out;
}

// The change of each measurement's received pps against the baseline, in %, with the interval of the
// difference of the means (as a share of the baseline's mean) where both sides have repeats.
std::optional<chart> change_chart(const std::vector<comparison>& all, const std::string& id) {
  std::string script = "set grid ytics lc rgb '#dddddd'\nset border 3\nset tics nomirror\nset key outside top center horizontal\n";
  std::string plot;
  // One position per measurement (its group key, unique in a folder), in the order first met.
  std::vector<std::string> keys;
  auto position = [&](const compare_row& r) {
    auto it = std::find(keys.begin(), keys.end(), r.a.key);
    if (it == keys.end()) it = keys.insert(keys.end(), r.a.key);
    return static_cast<std::size_t>(it - keys.begin()) + 1;
  };
  for (std::size_t k = 0; k < all.size(); ++k) {
    std::vector<std::vector<std::string>> with, without;
    for (const auto& r : all[k].rows) {
      const std::size_t x = position(r);
      if (std::isnan(r.pps_change)) continue;
      const double base = r.a.received_pps.mean;
      auto& rows = r.pps.has_interval ? with : without;
      rows.push_back({std::to_string(x), fmt::format("{:.6g}", r.pps_change), fmt::format("{:.6g}", r.pps.low / base * 100),
                      fmt::format("{:.6g}", r.pps.high / base * 100)});
    }
    if (!with.empty()) {
      script += gp_datablock(fmt::format("W{}", k), with);
      plot += fmt::format("{}$W{} using 1:2:3:4 with yerrorbars pt 7 ps 0.8 lw 1.5 lc rgb '#1a73e8' title {}", plot.empty() ? "" : ", ", k,
                          gp_quote(short_name(all[k].b_name) + " against " + short_name(all[k].a_name)));
    }
    if (!without.empty()) {
      script += gp_datablock(fmt::format("N{}", k), without);
      plot += fmt::format("{}$N{} using 1:2 with points pt 6 ps 1.2 lw 1.5 lc rgb '#e8710a' title {}", plot.empty() ? "" : ", ", k,
                          gp_quote(short_name(all[k].b_name) + " (one run: no interval)"));
    }
  }
  std::string tics;
  for (std::size_t x = 0; x < keys.size(); ++x) tics += fmt::format("{}{} {}", x ? ", " : "", gp_quote(keys[x]), x + 1);
  if (plot.empty()) return std::nullopt;
  script += fmt::format("set xrange [0.5:{}.5]\nset xtics ({}) rotate by -25\nset ylabel 'received pps: change (%)'\n"
                        "set arrow from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#5f6368'\nplot {}\n",
                        keys.size(), tics, plot);
  chart c{"compare", "Change of the received pps against the baseline; error bars: the 95 % interval of the difference "
                     "of the means (Welch), where both sides have repeats. An interval that crosses zero shows no difference.",
          "", ""};
  try {
    c.svg = render_svg(script, 900, 420, id);
  } catch (const chart_error& e) {
    c.error = e.what();
  }
  return c;
}

std::string one_comparison(const comparison& c) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : c.rows)
    rows.push_back({h::escape(r.a.test), h::escape(measurement(r.a)), verdict_cell(r),
                    h::with_interval(r.a.received_pps, exact_pps), h::with_interval(r.b.received_pps, exact_pps),
                    change(r.pps_change), h::with_interval(r.a.received_bps, exact_mbps),
                    h::with_interval(r.b.received_bps, exact_mbps), change(r.bps_change)});
  std::string out = fmt::format("<h2>{} against {}</h2>\n", h::escape(c.b_name), h::escape(c.a_name));
  out += h::table({"test", "measurement", "verdict", "received pps A", "received pps B", "change", "received Mbit/s A",
                   "received Mbit/s B", "change"},
                  rows);
  for (const auto& k : c.only_in_a) out += fmt::format("<p class=\"note\">Only in {}: {}</p>\n", h::escape(c.a_name), h::escape(k));
  for (const auto& k : c.only_in_b) out += fmt::format("<p class=\"note\">Only in {}: {}</p>\n", h::escape(c.b_name), h::escape(k));
  return out;
}

}  // namespace

std::string compare_html(const std::vector<comparison>& all) {
  std::string body = "<h1>Comparison</h1>\n<p class=\"lede\">A is the baseline";
  if (!all.empty()) body += fmt::format(" ({})", h::escape(all.front().a_name));
  body += ". Figures: received, summed over the instances; with repeats, the mean ± the half-width of its 95 % interval. "
          "<b>better</b> / <b>worse</b>: the 95 % interval of the difference of the means (Welch's t) lies wholly above / "
          "below zero; otherwise the repeats show no difference. One run on a side gives no interval and no verdict.</p>\n";
  if (!all.empty())
    if (auto c = change_chart(all, "c1")) body += h::figure(*c);
  for (const auto& c : all) body += one_comparison(c);
  return h::page("Comparison", body);
}

}  // namespace harness
