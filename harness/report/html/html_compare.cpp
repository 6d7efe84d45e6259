#include "harness/report/html/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

namespace harness {
namespace {

namespace h = html;

// Changes of a few tenths of a percent must show: whole figures, not three significant digits.
std::string exact_pps(double v) { return h::grouped(v) + "\u00a0pps"; }
std::string exact_mbps(double bps) { return h::grouped(bps / 1e6, 2) + "\u00a0Mbit/s"; }

std::string change(double pct) { return std::isnan(pct) ? "n/a" : fmt::format("{:+.2f}\u00a0%", pct); }

std::string verdict_cell(const compare_row& r) {
  const char* css = r.judged == verdict::better ? "good" : r.judged == verdict::worse ? "bad" : "note";
  return fmt::format("<span class=\"{}\">{}</span>", css, h::escape(r.verdict_text));
}

std::string compared_measurement(const repeat_group& g) {
  std::string out = fmt::format("{} -m {}", g.role, g.message_size);
  if (!g.load.empty()) out += " at " + g.load;
  if (!g.route.empty()) out += " " + g.route;
  return out;
}

std::string one_comparison(const comparison& c) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : c.rows)
    rows.push_back({h::escape(r.a.test), h::escape(compared_measurement(r.a)), verdict_cell(r),
                    h::with_interval(r.a.received_pps, exact_pps), h::with_interval(r.b.received_pps, exact_pps),
                    change(r.pps_change), h::with_interval(r.a.received_bps, exact_mbps),
                    h::with_interval(r.b.received_bps, exact_mbps), change(r.bps_change)});
  std::string out = fmt::format("<h2>{} against {}</h2>\n", h::escape(c.b_name), h::escape(c.a_name));
  out += h::table({"test", "measurement", "verdict", "received pps A", "received pps B", "change", "received Mbit/s A",
                   "received Mbit/s B", "change"},
                  rows);
  for (const auto& k : c.only_in_a)
    out += fmt::format("<p class=\"note\">Only in {}: {}</p>\n", h::escape(c.a_name), h::escape(k));
  for (const auto& k : c.only_in_b)
    out += fmt::format("<p class=\"note\">Only in {}: {}</p>\n", h::escape(c.b_name), h::escape(k));
  return out;
}

}  // namespace

std::string compare_html(const std::vector<comparison>& all) {
  std::string body = "<h1>Comparison</h1>\n<p class=\"lede\">A is the baseline";
  if (!all.empty()) body += fmt::format(" ({})", h::escape(all.front().a_name));
  body +=
      ". Figures: received, summed over the instances; with repeats, the mean ± the half-width of its 95 % interval. "
      "<b>better</b> / <b>worse</b>: the 95 % interval of the difference of the means (Welch's t) lies wholly above / "
      "below zero; otherwise the repeats show no difference. One run on a side gives no interval and no verdict.</p>\n";
  if (!all.empty())
    if (auto c = change_chart(all, "c1")) body += h::figure(*c);
  for (const auto& c : all) body += one_comparison(c);
  return h::page("Comparison", body);
}

}  // namespace harness
