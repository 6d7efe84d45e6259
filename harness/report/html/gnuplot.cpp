#include "harness/report/html/gnuplot.hpp"

#include "core/base/text.hpp"
#include "harness/process/process.hpp"

#include <fmt/format.h>

#include <chrono>
#include <regex>

namespace harness {

std::string gp_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    // A newline would end the command mid-string and make the rest gnuplot commands (`system` among them).
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
  }
  return out + "'";
}

std::string gp_datablock(std::string_view name, const std::vector<std::vector<std::string>>& rows) {
  std::string out = fmt::format("${} << EOD\n", name);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out += (c ? " " : "") + row[c];
    out += "\n";
  }
  return out + "EOD\n";
}

std::string inline_svg(std::string svg, std::string_view id) {
  const auto start = svg.find("<svg");
  if (start == std::string::npos) throw chart_error("gnuplot printed no SVG");
  svg.erase(0, start);
  // Point shapes gpPt0... must be each chart's own in a page of many; group ids repeat and become a class,
  // which the render test looks for.
  svg = std::regex_replace(svg, std::regex(R"((id=|href=)(['"])(#?)(gp[A-Za-z0-9]+))"), fmt::format("$1$2$3{}-$4", id));
  svg = std::regex_replace(svg, std::regex(R"(id="gnuplot_plot_[0-9]+[a-z]*")"), R"(class="gnuplot-plot")");
  svg = std::regex_replace(svg, std::regex(R"(id="gnuplot_canvas")"), R"(class="gnuplot-canvas")");
  return svg;
}

std::string render_svg(const std::string& script, int width, int height, std::string_view id) {
  const std::string full = fmt::format(
      "set terminal svg size {},{} dynamic font 'sans,11' background '#ffffff'\n"
      "set termoption noenhanced\nset encoding utf8\n{}",
      width, height, script);
  nb::process_outcome out;
  try {
    out = nb::run_blocking({"gnuplot"}, std::chrono::seconds(30), full);
  } catch (const std::exception& e) {
    throw chart_error(fmt::format("gnuplot could not start ({}): install gnuplot-nox", e.what()));
  }
  if (out.timed_out) throw chart_error("gnuplot did not finish within 30 s");
  if (out.exit_code != 0)
    throw chart_error(
        fmt::format("gnuplot failed (exit status {}): {}", out.exit_code, nb::first_line(out.stderr_text)));
  return inline_svg(std::move(out.stdout_text), id);
}

}  // namespace harness
