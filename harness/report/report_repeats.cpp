// The figures are stats.cpp's; only text here.
#include "harness/report/model/stats.hpp"
#include "harness/report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace harness {

namespace {

bool any_repeated(const std::vector<repeat_group>& groups) {
  return std::any_of(groups.begin(), groups.end(), is_repeated);
}

// `plus_minus` is "+-" on a console, where a two-byte sign would skew the columns.
std::string mean_sd(const spread& s, std::string (*f)(double), const char* plus_minus) {
  if (s.n == 0) return "n/a";
  return s.has_interval() ? fmt::format("{} {} {}", f(s.mean), plus_minus, f(s.sd)) : f(s.mean);
}

std::string interval(const spread& s, std::string (*f)(double)) {
  return s.has_interval() ? fmt::format("{} .. {}", f(s.ci_low), f(s.ci_high)) : "n/a";
}

std::string pps_text(double v) { return fmt_thousands(v); }
std::string mbps_text(double v) { return fmt_mbps(v); }
std::string percent_text(double v) { return fmt::format("{:.3f}", v); }

std::string runs_cell(const repeat_group& g) {
  return g.failed ? fmt::format("{} ({} failed)", g.ok_runs(), g.failed) : std::to_string(g.ok_runs());
}

std::string measurement(const repeat_group& g) {
  return g.load.empty() ? g.key : fmt::format("{} ({} each)", g.key, g.load);
}

}  // namespace

std::string repeats_markdown(const std::vector<run_summary>& runs) {
  const auto groups = group_repeats(runs);
  if (!any_repeated(groups)) return "";
  text_table t({"measurement", "role", "m (bytes)", "ok runs", "received pps: mean ± sd", "min", "max", "95 % CI",
                "received Mbit/s: mean ± sd", "min", "max", "95 % CI", "loss %: mean ± sd"});
  for (const auto& g : groups) {
    if (!is_repeated(g)) continue;
    const auto& p = g.received_pps;
    const auto& b = g.received_bps;
    const bool none = p.n == 0;
    t.add({measurement(g), g.route.empty() ? g.role : g.route, std::to_string(g.message_size), runs_cell(g),
           mean_sd(p, pps_text, "±"), none ? "" : pps_text(p.min), none ? "" : pps_text(p.max), interval(p, pps_text),
           mean_sd(b, mbps_text, "±"), none ? "" : mbps_text(b.min), none ? "" : mbps_text(b.max),
           interval(b, mbps_text), mean_sd(g.loss_percent, percent_text, "±")});
  }
  return "## Repeats\n\nEach measurement repeated: n ok runs (failed ones have no figures), the mean and sample "
         "standard deviation of the run sums, min, max and the 95 % confidence interval of the mean (Student's t, "
         "n - 1 degrees of freedom).\n\n" +
         t.markdown() + "\n";
}

std::string repeats_console(const std::vector<run_summary>& runs) {
  const auto groups = group_repeats(runs);
  if (!any_repeated(groups)) return "";
  text_table t(
      {"measurement", "ok runs", "recv pps (mean +- 95 % CI)", "recv Mbit/s (mean +- 95 % CI)", "loss % (mean)"});
  for (const auto& g : groups)
    if (is_repeated(g))
      t.add({measurement(g), runs_cell(g), fmt_mean_interval(g.received_pps, pps_text, " +- "),
             fmt_mean_interval(g.received_bps, mbps_text, " +- "),
             g.loss_percent.n ? percent_text(g.loss_percent.mean) : "n/a"});
  return "\nRepeats (spread of the run sums)\n" + t.text();
}

std::string repeats_csv(const std::vector<run_summary>& runs) {
  std::string out;
  for (const auto& g : group_repeats(runs)) {
    if (g.ok_runs() < 2) continue;  // one number has no spread
    const auto& first = runs[g.runs.front()].run;
    const bool pair = g.topo == topology::pairs && !first.instances.empty();
    const std::string head = fmt::format("{},{},{},{},{},{}", csv_quote(g.key), csv_quote(g.test), csv_quote(g.role),
                                         to_string(g.topo), nb::to_string(g.kind), g.message_size);
    const std::string client = pair ? csv_quote(first.instances.front().client) : "";
    const std::string server = pair ? csv_quote(first.instances.front().server) : "";
    using pick = double (*)(const spread&);
    const std::pair<const char*, pick> rows[] = {{"MEAN", [](const spread& s) { return s.mean; }},
                                                 {"SD", [](const spread& s) { return s.sd; }},
                                                 {"MIN", [](const spread& s) { return s.min; }},
                                                 {"MAX", [](const spread& s) { return s.max; }},
                                                 {"CI95_LOW", [](const spread& s) { return s.ci_low; }},
                                                 {"CI95_HIGH", [](const spread& s) { return s.ci_high; }}};
    for (const auto& [name, f] : rows)
      out += fmt::format("{},\"{}\",{},{},,true,,,{:.3f},{:.3f},{:.1f},{:.1f},,,,,\n", head, name, client, server,
                         f(g.sent_pps), f(g.received_pps), f(g.sent_bps), f(g.received_bps));
  }
  return out;
}

}  // namespace harness
