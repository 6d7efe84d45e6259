// The page's building blocks: escaping, figure formats, tables, chart figures and the page itself.
#include "harness/report/html.hpp"

#include <fmt/format.h>

#include <cmath>

namespace harness::html {
namespace {

constexpr const char* narrow_space = "\u202f";  // between digit groups: never breaks a figure
constexpr const char* unit_space = "\u00a0";    // between a figure and its unit

// A page read on paper or a projector as much as on a screen: plain, dense, figures in tabular digits.
constexpr const char* style = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #202124;
       max-width: 1180px; margin: 2em auto; padding: 0 1.5em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #dadce0; }
h3 { margin-top: 1.6em; }
.lede { color: #5f6368; }
div.table { overflow-x: auto; margin: 0.8em 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e8eaed; vertical-align: top; white-space: nowrap; }
td.text { white-space: normal; min-width: 16em; }
th { background: #f1f3f4; text-align: left; font-weight: 600; }
td.n, th.n { text-align: right; white-space: nowrap; }
tr.total td { font-weight: 600; border-top: 1px solid #9aa0a6; }
.bad { color: #d93025; font-weight: 600; } .good { color: #188038; font-weight: 600; } .note { color: #5f6368; }
figure.chart { margin: 1em 0 1.5em; } figure.chart svg { width: 100%; height: auto; display: block; }
figcaption { color: #5f6368; font-size: 0.92em; }
details { margin: 0.6em 0; } summary { cursor: pointer; font-weight: 600; }
pre { background: #f8f9fa; border: 1px solid #e8eaed; padding: 0.8em; overflow-x: auto; font-size: 12px; }
ul.problems li { color: #d93025; }
@media print { details { page-break-inside: avoid; } body { max-width: none; } }
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

std::string grouped(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  std::string text = fmt::format("{:.{}f}", std::fabs(value), decimals);
  const auto point = text.find('.');
  std::string whole = text.substr(0, point), out;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += narrow_space;
    out += whole[i];
  }
  if (point != std::string::npos) out += text.substr(point);
  return (value < 0 && text.find_first_not_of("0.") != std::string::npos ? "-" : "") + out;
}

namespace {
// Three significant digits, as a reader compares rates: 1.23, 12.3, 123.
std::string three_digits(double v) { return grouped(v, v < 10 ? 2 : v < 100 ? 1 : 0); }
}  // namespace

std::string pps(double value) {
  if (!std::isfinite(value)) return "n/a";
  const double a = std::fabs(value);
  if (a < 1e3) return fmt::format("{}{}pps", grouped(value, a < 10 && a != std::floor(a) ? 2 : 0), unit_space);
  const char* prefix = a < 1e6 ? "k" : a < 1e9 ? "M" : "G";
  const double scaled = value / (a < 1e6 ? 1e3 : a < 1e9 ? 1e6 : 1e9);
  return fmt::format("{}{}{}{}pps", three_digits(scaled), unit_space, prefix, unit_space);
}

std::string mbps(double bits_per_second) {
  if (!std::isfinite(bits_per_second)) return "n/a";
  const double m = bits_per_second / 1e6;
  const double a = std::fabs(m);
  const std::string figure = a >= 100 ? grouped(m, 0) : a >= 1 || a == 0 ? three_digits(m) : fmt::format("{:.3g}", m);
  return fmt::format("{}{}Mbit/s", figure, unit_space);
}

std::string with_interval(const spread& s, std::string (*format)(double)) {
  if (s.n == 0) return "n/a";
  if (!s.has_interval()) return format(s.mean);
  return fmt::format("{} ±{}{}", format(s.mean), unit_space, format((s.ci_high - s.ci_low) / 2));
}

std::string table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<div class=\"table\"><table>\n<tr>";
  for (std::size_t c = 0; c < headers.size(); ++c)
    out += fmt::format("<th{}>{}</th>", c ? " class=\"n\"" : "", escape(headers[c]));
  out += "</tr>\n";
  for (const auto& row : rows) {
    const bool total = !row.empty() && (row[0] == "SUM" || row[0] == "STEADY");
    out += total ? "<tr class=\"total\">" : "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      // A note is prose: it wraps, where a figure never does.
      const bool prose = c < headers.size() && headers[c] == "note";
      out += fmt::format("<td{}>{}</td>", prose ? " class=\"text\"" : c ? " class=\"n\"" : "", row[c]);
    }
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

std::string figure(const chart& c) {
  if (c.svg.empty())
    return fmt::format("<figure class=\"chart missing\" data-chart=\"{}\"><p class=\"bad\">Chart not drawn: {}</p></figure>\n",
                       escape(c.name), escape(c.error));
  return fmt::format("<figure class=\"chart\" data-chart=\"{}\">\n{}\n<figcaption>{}</figcaption></figure>\n", escape(c.name),
                     c.svg, escape(c.caption));
}

std::string page(std::string_view title, std::string_view body) {
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
                     "<style>{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
                     escape(title), style, body);
}

}  // namespace harness::html
