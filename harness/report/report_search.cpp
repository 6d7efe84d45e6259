// The rate searches in the reports, in RFC 9971's terms: per search goal its relevant lower bound,
// relevant upper bound and conditional throughput (aggregate and per instance, the conversion named),
// whether the result is regular; then every trial in the order it ran, and the latency steps.
#include "core/base/units.hpp"
#include "harness/report/report.hpp"
#include "harness/report/search_view.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace harness {
namespace {

using nlohmann::json;

std::string trial_load(const json& t) {
  if (t.value("unpaced", false)) return "unpaced";
  return load_cell(t, "intended_load");
}

void add_rows(text_table& t, const json& s) {
  const json& search = s.at("search");
  const std::vector<std::string> head{s.at("role").get<std::string>(), s.at("test").get<std::string>(),
                                      std::to_string(s.at("message_size").get<std::uint32_t>())};
  auto row = [&](std::vector<std::string> cells) {
    cells.insert(cells.begin(), head.begin(), head.end());
    t.add(std::move(cells));
  };
  if (!is_goal_search(search)) {
    row({"(recorded by an older harness: see its search.json)", "", "", "", "", ""});
    return;
  }
  if (const json& mrr = search.at("mrr"); mrr.is_object()) {
    if (mrr.value("interrupted", false))
      row({"MRR (unpaced)", "**INTERRUPTED**", "", "", "", "cut short by a stop: no maximal load, nothing searched"});
    else if (mrr.value("ran", false))
      row({"MRR (unpaced)", fmt::format("received {}", fmt_pps(number_or(mrr, "forwarding_rate"))), "", "", "",
           fmt::format("offered {} (the maximal load)", fmt_pps(number_or(mrr, "offered_rate")))});
    else row({"MRR (unpaced)", "**FAILED**", "", "", "", mrr.value("failure", "")});
  }
  for (const json& r : search.at("goal_results")) {
    row({goal_words(r.at("goal")), load_cell(r, "relevant_lower_bound"), load_cell(r, "relevant_upper_bound"),
         load_cell(r, "conditional_throughput"), mbps_cell(r, "conditional_throughput_bits_per_second"),
         regularity(r)});
  }
}

// A trial a stop cut short: what it counted until then, which the search was never told.
std::vector<std::string> interrupted_trial_cells(const json& m) {
  if (!m.is_object()) return {"INTERRUPTED", "", "", "", "stopped before anything was counted"};
  const double sent = number_or(m, "offered_count"), got = number_or(m, "forwarding_count");
  return {fmt_pps(number_or(m, "offered_rate")), fmt_pps(number_or(m, "forwarding_rate")),
          sent > 0 ? fmt::format("{:.6f}", (sent - got) / sent) : "", "",
          fmt::format("INTERRUPTED after {:.1f} s: counts until the stop, not told to the search",
                      number_or(m, "seconds"))};
}

std::string trial_table(const json& s) {
  text_table t({"trial", "phase", "why", "intended load pps (per instance)", "duration s", "sent pps", "received pps",
                "loss ratio", "limit", "note"});
  int k = 0;
  for (const json& x : s.at("search").at("trials")) {
    std::vector<std::string> row{std::to_string(++k), x.value("phase", ""), x.value("reason", ""), trial_load(x),
                                 fmt::format("{:g}", number_or(x, "trial_duration"))};
    if (x.value("interrupted", false)) {
      const auto cells = interrupted_trial_cells(x.value("until_stop", json()));
      row.insert(row.end(), cells.begin(), cells.end());
    } else if (!x.value("ran", false)) {
      row.insert(row.end(), {"FAILED TO RUN", "", "", "", x.value("failure", "")});
    } else {
      row.insert(row.end(), {fmt_pps(number_or(x, "offered_rate")), fmt_pps(number_or(x, "forwarding_rate")),
                             fmt::format("{:.6f}", number_or(x, "loss_ratio")), x.value("limit", ""),
                             x.value("note", x.value("load_limited", false) ? "load-limited: does not count" : "")});
    }
    t.add(row);
  }
  return t.markdown();
}

std::string latency_table(const json& s) {
  const json steps = s.at("search").value("latency", json::array());
  if (steps.empty()) return "";
  text_table t({"load", "intended load pps (per instance)", "loss ratio", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs",
                "max µs", "round trips"});
  for (const json& l : steps) {
    std::vector<std::string> row{l.value("name", ""), load_cell(l, "intended_load")};
    if (l.contains("error")) {
      row.insert(row.end(), {"", "FAILED: " + l.value("error", ""), "", "", "", "", ""});
    } else {
      const json& h = l.at("latency");
      row.push_back(fmt::format("{:.6f}", number_or(l, "loss_ratio")));
      for (const char* p : {"p50_us", "p90_us", "p99_us", "p999_us", "max_us"})
        row.push_back(fmt::format("{:.1f}", number_or(h, p)));
      row.push_back(std::to_string(h.value("count", 0)));
    }
    t.add(row);
  }
  return fmt::format(
      "Latency under load (the probe's round trips, as FD.io CSIT publishes them at fractions of the PDR):\n\n{}\n",
      t.markdown());
}

text_table search_table(const std::vector<json>& searches) {
  text_table t({"role", "test", "m (bytes)", "goal", "relevant lower bound", "relevant upper bound",
                "conditional throughput", "Mbit/s", "result"});
  for (const auto& s : searches) add_rows(t, s);
  return t;
}

std::string conversions(const std::vector<json>& searches) {
  std::vector<std::string> out;
  for (const auto& s : searches)
    if (is_goal_search(s.at("search")))
      out.push_back(fmt::format("{}: {}", s.at("id").get<std::string>(), s.at("search").value("load_conversion", "")));
  return fmt::format("{}", fmt::join(out, "; "));
}

}  // namespace

std::string search_markdown(const std::vector<json>& searches) {
  if (searches.empty()) return "";
  std::string out =
      "## Rate search (MLRsearch, RFC 9971)\n\n"
      "Per search goal: the relevant lower bound (the highest load classified a lower bound for the goal: its trials "
      "lost no more than the goal loss ratio for long enough), the relevant upper bound (the lowest load above it "
      "classified an upper bound) and the conditional throughput (the forwarding rate at the relevant lower bound). "
      "Loads are the aggregate intended load in packets per second over the instances, split equally; per instance in "
      "brackets (" +
      conversions(searches) +
      "). MRR is what one unpaced trial received; what it offered is the maximal load. "
      "A result is regular when both bounds exist and are within the goal width; otherwise its irregularities are named.\n\n";
  out += search_table(searches).markdown() + "\n";
  for (const auto& s : searches) {
    if (!is_goal_search(s.at("search"))) continue;
    out += fmt::format("### Search {}: goals and trials ({:g} trial-seconds{})\n\n{}\n{}\n{}",
                       s.at("id").get<std::string>(), number_or(s.at("search"), "trial_seconds"),
                       stopped_words(s.at("search")), goals_table(s.at("search")).markdown(), trial_table(s),
                       latency_table(s));
  }
  return out;
}

std::string search_console(const std::vector<json>& searches) {
  if (searches.empty()) return "";
  return fmt::format("\nRate search (MLRsearch, RFC 9971; loads in aggregate pps, per instance in brackets: {})\n",
                     conversions(searches)) +
         search_table(searches).text();
}

}  // namespace harness
