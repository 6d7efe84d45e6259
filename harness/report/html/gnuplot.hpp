#pragma once
// Charts drawn by gnuplot (its svg terminal) for report.html: a script on gnuplot's stdin, the data in
// it as inline datablocks, the SVG read back from its stdout and made fit to sit inline in a page with
// other charts (ids made unique, no XML prologue, scaled by CSS).
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// gnuplot is missing, failed or printed no SVG: the report says so in the chart's place.
struct chart_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A gnuplot string literal: single-quoted, in which only a quote needs escaping ('' for ').
std::string gp_quote(std::string_view text);
// A datablock named $name holding the rows, each row's cells separated by spaces (cells must not hold
// white space: quote labels with gp_quote).
std::string gp_datablock(std::string_view name, const std::vector<std::vector<std::string>>& rows);

// Runs `gnuplot` with the svg terminal of width x height (pixels of its coordinate system) set ahead of
// `script`; `id` makes the SVG's ids unique in the page. Throws chart_error.
std::string render_svg(const std::string& script, int width, int height, std::string_view id);

// The inline-ready SVG from what gnuplot printed (exposed for the tests).
std::string inline_svg(std::string svg, std::string_view id);

}  // namespace harness
