#pragma once
// The console table, summary.csv and report.md: text only, so every report says what summary.json says.
#include "harness/report/model/aggregate.hpp"
#include "harness/report/model/stats.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

class text_table {
 public:
  explicit text_table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string text() const;
  std::string markdown() const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Search trials are left out: the search sections show them.
std::string console_summary(const std::vector<run_summary>& runs, const std::vector<nlohmann::json>& searches = {});
// `why`: "stopped by SIGINT before it began", or "missing from raw/".
struct unrun {
  std::string id, why;
  bool stopped = false;
};
std::string summary_csv(const std::vector<run_summary>& runs, const std::vector<unrun>& not_run = {});
std::string report_markdown(const std::vector<run_summary>& runs, const std::vector<nlohmann::json>& searches,
                            const std::filesystem::path& dir);
std::string search_markdown(const std::vector<nlohmann::json>& searches);
std::string search_console(const std::vector<nlohmann::json>& searches);
// Empty when no measurement ran twice; the CSV rows are MEAN, SD, MIN, MAX, CI95_LOW, CI95_HIGH.
std::string repeats_markdown(const std::vector<run_summary>& runs);
std::string repeats_console(const std::vector<run_summary>& runs);
std::string repeats_csv(const std::vector<run_summary>& runs);

std::string fmt_pps(double pps);
std::string fmt_mbps(double bps);
// "1 234 567"; report.html separates with a narrow no-break space.
std::string fmt_thousands(double value, int decimals = 0, std::string_view separator = " ");
// "12 +- 2"; the mean alone for one ok run, `none` for none.
std::string fmt_mean_interval(const spread& s, std::string (*format)(double), std::string_view between,
                              std::string_view none = "n/a");
std::string csv_quote(const std::string& s);
std::vector<std::string> instance_cells(const instance_record& i, double t0);
std::vector<std::string> sum_cells(const run_summary& s);
std::vector<std::string> steady_cells(const run_summary& s);
std::vector<std::string> until_stop_cells(const run_summary& s);
// In flight at the stop counts as lost.
double loss_percent(const measured_part& m);
std::vector<std::string> detail_headers();
// TCP_INFO at the end: retransmits, RTT, MSS, path MTU; the sum row totals, averages or takes the least.
bool is_tcp(const run_summary& s);
std::vector<std::string> tcp_headers();
std::vector<std::string> tcp_cells(const instance_record& i);
std::vector<std::string> tcp_sum_cells(const run_summary& s);
text_table run_table(const run_summary& s);

// After "limit: ": the majority's kind, the run's loss, one named instance's words. Empty without a verdict.
std::string limit_words(const run_summary& s);
// Empty unless interrupted.
std::string until_stop_words(const run_summary& s);
// Empty without a circuit.
std::string circuit_words(const run_summary& s);

}  // namespace harness
