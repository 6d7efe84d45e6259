#pragma once
// report.html and compare.html: self-contained pages (docs/reports.md#reporthtml).
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

// `chart_errors` gets a line per chart gnuplot could not draw; `history` null says the store was not read.
std::string report_html(const std::vector<run_summary>& runs, const std::vector<nlohmann::json>& searches,
                        const std::filesystem::path& dir, std::vector<std::string>* chart_errors = nullptr,
                        const run_history* history = nullptr);

std::string compare_html(const std::vector<comparison>& all);

namespace html {

std::string escape(std::string_view text);
// "results/x/" is the folder "x".
std::string folder_name(const std::filesystem::path& dir);
// 9872.4 -> "9 872" (narrow no-break spaces).
std::string grouped(double value, int decimals = 0);
// 1234567 -> "1.23 M pps".
std::string pps(double value);
// 9.872e9 -> "9 872 Mbit/s".
std::string mbps(double bits_per_second);
// The mean alone for one run.
std::string with_interval(const spread& s, std::string (*format)(double));

// Cells are HTML already; columns after the first are figures, set right.
std::string table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows);
// <figure class="chart" data-chart="NAME">, or why it is missing.
std::string figure(const chart& c);
std::string page(std::string_view title, std::string_view body);

}  // namespace html

// Returns a line per chart not drawn; `history` null for `harness report`, which reads no store.
std::vector<std::string> write_html_report(const std::filesystem::path& dir, const std::vector<run_summary>& runs,
                                           const std::vector<nlohmann::json>& searches,
                                           const run_history* history = nullptr);

}  // namespace harness
