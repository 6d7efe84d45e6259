#include "harness/report/html/html.hpp"
#include "harness/report/report.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <utility>

namespace harness::html {
namespace {

constexpr const char* narrow_space = "\u202f";  // never breaks a figure
constexpr const char* unit_space = "\u00a0";    // between a figure and its unit

// For paper and projectors as much as screens: plain, dense, tabular digits.
constexpr const char* style = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #202124;
       max-width: 1180px; margin: 2em auto; padding: 0 1.5em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #dadce0; }
h3 { margin-top: 1.6em; font-size: 1.1em; }
section.run { margin: 1.2em 0 2em; }
.lede { color: #5f6368; }
.banner { border: 2px solid #d93025; background: #fce8e6; padding: 0.6em 1em; }
div.table { overflow-x: auto; margin: 0.8em 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13px; }
th, td { padding: 0.25em 0.5em; border-bottom: 1px solid #e8eaed; vertical-align: top; }
th { background: #f1f3f4; text-align: left; font-weight: 600; }
td.text { min-width: 16em; }
td.n, th.n { text-align: right; }
tr.total td { font-weight: 600; border-top: 1px solid #9aa0a6; }
.bad { color: #d93025; font-weight: 600; } .good { color: #188038; font-weight: 600; } .note { color: #5f6368; }
figure.chart { margin: 1em 0 1.5em; } figure.chart svg { width: 100%; height: auto; display: block; }
figcaption { color: #5f6368; font-size: 0.92em; }
pre { background: #f8f9fa; border: 1px solid #e8eaed; padding: 0.8em; font-size: 12px; white-space: pre-wrap;
      overflow-wrap: anywhere; }
ul.problems li { color: #d93025; }
@page { margin: 12mm; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 11px; }
  table { font-size: 10px; }
  div.table, pre { overflow: visible; }
  pre { font-size: 9px; }
  figure.chart, tr, .banner { break-inside: avoid; page-break-inside: avoid; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
}
)";

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string folder_name(const std::filesystem::path& dir) {
  const auto p = dir.lexically_normal();
  return (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
}

std::string grouped(double value, int decimals) { return fmt_thousands(value, decimals, narrow_space); }

namespace {
// Three significant digits, as a reader compares rates (9.996 is 10.0).
std::string three_digits(double v) {
  const double a = std::fabs(v);
  return grouped(v, a < 9.995 ? 2 : a < 99.95 ? 1 : 0);
}
}  // namespace

std::string pps(double value) {
  if (!std::isfinite(value)) return "n/a";
  const double a = std::fabs(value);
  // 999 600 is "1.00 M", not "1 000 k".
  double scale = 1;
  const char* prefix = "";
  for (const auto& [s, name] : {std::pair{1e3, "k"}, std::pair{1e6, "M"}, std::pair{1e9, "G"}})
    if (a >= s * 0.9995) {
      scale = s;
      prefix = name;
    }
  if (scale == 1) return fmt::format("{}{}pps", grouped(value, a < 10 && a != std::floor(a) ? 2 : 0), unit_space);
  return fmt::format("{}{}{}{}pps", three_digits(value / scale), unit_space, prefix, unit_space);
}

std::string mbps(double bits_per_second) {
  if (!std::isfinite(bits_per_second)) return "n/a";
  const double m = bits_per_second / 1e6;
  const double a = std::fabs(m);
  const std::string figure = a >= 100 ? grouped(m, 0) : a >= 1 || a == 0 ? three_digits(m) : fmt::format("{:.3g}", m);
  return fmt::format("{}{}Mbit/s", figure, unit_space);
}

std::string with_interval(const spread& s, std::string (*format)(double)) {
  return fmt_mean_interval(s, format, fmt::format(" ±{}", unit_space));
}

namespace {
// Figures right, words left, by what the cells start with.
std::vector<bool> figure_columns(std::size_t n, const std::vector<std::vector<std::string>>& rows) {
  std::vector<bool> figures(n, true);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < n; ++c) {
      const std::string& cell = row[c];
      if (cell.empty() || cell[0] == '<' || cell == "n/a" || cell == "unknown") continue;
      const bool figure = std::isdigit(static_cast<unsigned char>(cell[0])) || cell[0] == '-' || cell[0] == '+' ||
                          cell.rfind("≤", 0) == 0 || cell.rfind("skew", 0) == 0;
      figures[c] = figures[c] && figure;
    }
  if (n) figures[0] = false;
  return figures;
}
}  // namespace

std::string table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  const auto figures = figure_columns(headers.size(), rows);
  std::string out = "<div class=\"table\"><table>\n<tr>";
  for (std::size_t c = 0; c < headers.size(); ++c)
    out += fmt::format("<th{}>{}</th>", figures[c] ? " class=\"n\"" : "", escape(headers[c]));
  out += "</tr>\n";
  for (const auto& row : rows) {
    const bool total = !row.empty() && (row[0] == "SUM" || row[0] == "STEADY" || row[0] == "UNTIL STOP");
    out += total ? "<tr class=\"total\">" : "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      // A note is prose: it wraps, where a figure never does.
      const bool prose = c < headers.size() && headers[c] == "note";
      out += fmt::format("<td{}>{}</td>",
                         prose                              ? " class=\"text\""
                         : c < figures.size() && figures[c] ? " class=\"n\""
                                                            : "",
                         row[c]);
    }
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

std::string figure(const chart& c) {
  if (c.svg.empty())
    return fmt::format(
        "<figure class=\"chart missing\" data-chart=\"{}\"><p class=\"bad\">Chart not drawn: {}</p></figure>\n",
        escape(c.name), escape(c.error));
  return fmt::format("<figure class=\"chart\" data-chart=\"{}\">\n{}\n<figcaption>{}</figcaption></figure>\n",
                     escape(c.name), c.svg, escape(c.caption));
}

std::string page(std::string_view title, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
      escape(title), style, body);
}

}  // namespace harness::html
