#pragma once
// Reports from run summaries: the console table, summary.csv and report.md. Text only; no figures are
// computed here beyond unit conversion, so every report says the same as summary.json.
#include "harness/report/model/aggregate.hpp"
#include "harness/report/model/stats.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// A plain table rendered as aligned text (console) or as Markdown.
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

// Search trials are left out of the run tables: the search sections show them.
std::string console_summary(const std::vector<run_summary>& runs, const std::vector<nlohmann::json>& searches = {});
// A planned run with nothing in raw/: `why` is "stopped by SIGINT before it began" when a signal stopped
// the plan, else "missing from raw/". Every report lists the runs a stop prevented, "not run: WHY".
struct unrun {
  std::string id, why;
  bool stopped = false;
};
// After the runs' rows, a NOT RUN row for each of `not_run`.
std::string summary_csv(const std::vector<run_summary>& runs, const std::vector<unrun>& not_run = {});
std::string report_markdown(const std::vector<run_summary>& runs, const std::vector<nlohmann::json>& searches,
                            const std::filesystem::path& dir);
std::string search_markdown(const std::vector<nlohmann::json>& searches);
std::string search_console(const std::vector<nlohmann::json>& searches);
// Repeats (stats.hpp): report.md's section, the console table (both empty when no measurement was run
// twice), and summary.csv's MEAN, SD, MIN, MAX, CI95_LOW, CI95_HIGH rows per measurement with >= 2 ok runs.
std::string repeats_markdown(const std::vector<run_summary>& runs);
std::string repeats_console(const std::vector<run_summary>& runs);
std::string repeats_csv(const std::vector<run_summary>& runs);

// Shared cell formats.
std::string fmt_pps(double pps);
std::string fmt_mbps(double bps);
// "1 234 567": groups of three digits; report.html separates them with a narrow no-break space.
std::string fmt_thousands(double value, int decimals = 0, std::string_view separator = " ");
// A figure over repeats: its mean, then `between` and the half-width of its 95 % interval ("12 +- 2");
// the mean alone for one ok run, `none` for no ok run.
std::string fmt_mean_interval(const spread& s, std::string (*format)(double), std::string_view between,
                              std::string_view none = "n/a");
std::string csv_quote(const std::string& s);
std::vector<std::string> instance_cells(const instance_record& i, double t0);
std::vector<std::string> sum_cells(const run_summary& s);
std::vector<std::string> steady_cells(const run_summary& s);
// An interrupted run's row: what its instances counted until the stop, summed.
std::vector<std::string> until_stop_cells(const run_summary& s);
// Sent - received over sent, of counts taken until a stop (in flight at the stop counts as lost).
double loss_percent(const measured_part& m);
std::vector<std::string> detail_headers();
// TCP runs' extra columns: the sending connections at their end (TCP_INFO): retransmits, RTT, MSS and the
// path MTU; the sum row's are the instances' total retransmits, mean RTT, and smallest MSS and MTU.
bool is_tcp(const run_summary& s);
std::vector<std::string> tcp_headers();
std::vector<std::string> tcp_cells(const instance_record& i);
std::vector<std::string> tcp_sum_cells(const run_summary& s);
// A run's table of instances, SUM and STEADY, with the TCP columns for a TCP run.
text_table run_table(const run_summary& s);

// The run's limit, as every report says it (after "limit: "): the kind most instances voted for, the
// run's own loss summed over its instances, and the text of one instance's verdict, named as that
// instance's (its figures are its own). Empty when the run has no verdict.
std::string limit_words(const run_summary& s);
// An interrupted run in words: when it stopped, and what its instances had counted by then; empty for
// a run that was not interrupted.
std::string until_stop_words(const run_summary& s);
// An emulated circuit's counters (run.json "circuit", from a plan with a [lab] table) against the run's
// loss; empty when the run has none.
std::string circuit_words(const run_summary& s);

}  // namespace harness
