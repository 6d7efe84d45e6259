#pragma once
// report.html (and compare.html): one self-contained page — inline CSS, charts as inline SVG drawn by
// gnuplot, no script, nothing fetched — with figures in thousands-separated, unit-prefixed form.
#include "harness/report/compare.hpp"
#include "harness/report/html/charts.hpp"
#include "harness/report/html/trend.hpp"
#include "harness/report/model/aggregate.hpp"
#include "harness/report/model/stats.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// `chart_errors`, when given, gets one line per chart gnuplot could not draw (the page says so in its place).
// `history`: the run's measurements over the runs recorded before it, drawn small after the curves (null:
// one line says the page was rebuilt without the store).
std::string report_html(const std::vector<run_summary>& runs, const std::vector<nlohmann::json>& searches,
                        const std::filesystem::path& dir, std::vector<std::string>* chart_errors = nullptr,
                        const run_history* history = nullptr);

// compare.html: the comparisons' tables and one chart of the change in received pps.
std::string compare_html(const std::vector<comparison>& all);

namespace html {

std::string escape(std::string_view text);
// "results/x/" is the folder "x", as "results/x" is.
std::string folder_name(const std::filesystem::path& dir);
// 9872.4 -> "9 872" (narrow no-break spaces between groups of three digits).
std::string grouped(double value, int decimals = 0);
// 1234567 -> "1.23 M pps"; 987 -> "987 pps".
std::string pps(double value);
// 9.872e9 -> "9 872 Mbit/s"; 12.34e6 -> "12.3 Mbit/s".
std::string mbps(double bits_per_second);
// mean ± half-width of the 95 % interval, or the mean alone for one run.
std::string with_interval(const spread& s, std::string (*format)(double));

// A table; cells are HTML already (escape text first). Columns after the first are figures, set right.
std::string table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows);
// A chart in its <figure class="chart" data-chart="NAME">, or the reason it is missing in its place.
std::string figure(const chart& c);
std::string page(std::string_view title, std::string_view body);

}  // namespace html

// report.html, with its charts (a gnuplot per chart): once, at the end of a plan and by `harness report`.
// Returns one line per chart that could not be drawn. `history`: the run's measurements over the runs
// recorded before it (null: `harness report`, which reads no store).
std::vector<std::string> write_html_report(const std::filesystem::path& dir, const std::vector<run_summary>& runs,
                                           const std::vector<nlohmann::json>& searches,
                                           const run_history* history = nullptr);

}  // namespace harness
