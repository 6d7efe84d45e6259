#pragma once
// Charts by gnuplot's svg terminal: script and inline datablocks on stdin, SVG back on stdout, made fit to
// sit inline beside other charts.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// Missing, failed or no SVG: the report says so in the chart's place.
struct chart_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Single-quoted: only a quote needs escaping ('').
std::string gp_quote(std::string_view text);
// Cells must not hold white space: quote labels with gp_quote.
std::string gp_datablock(std::string_view name, const std::vector<std::vector<std::string>>& rows);

// width x height in gnuplot's pixels; `id` makes the SVG's ids unique in the page. Throws chart_error.
std::string render_svg(const std::string& script, int width, int height, std::string_view id);

// For the tests.
std::string inline_svg(std::string svg, std::string_view id);

}  // namespace harness
