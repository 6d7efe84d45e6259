#pragma once
// The charts of report.html, each a gnuplot script built from the figures the tables show (so chart and
// table never disagree) and drawn to inline SVG: the PPS-vs-BPS curves over message size with the
// repeats' intervals as error bars, each run's per-second rates, its instances' counts and losses, its
// hosts' CPU split, and each rate search's trials.
#include "harness/report/compare.hpp"
#include "harness/report/model/aggregate.hpp"
#include "harness/report/model/stats.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace harness {

struct chart {
  std::string name;     // what it shows, for the page and its test: "sweep-pps", "timeline", ...
  std::string caption;  // one sentence under it
  std::string svg;      // empty when it could not be drawn
  std::string error;    // why not
};

enum class sweep_metric { pps, mbps };

// Received (solid, with the repeats' 95 % intervals) and sent (dashed) against message size, one line
// per role (and kind, and offered load); nullopt when no line has two sizes.
std::optional<chart> sweep_chart(const std::vector<repeat_group>& groups, sweep_metric metric, const std::string& id);
// Aggregate received and sent per interval over the run, each instance a thin line, the steady window
// shaded; nullopt for a run with no per-second samples.
std::optional<chart> timeline_chart(const run_summary& s, const std::string& id);
// Per instance: sent and received packets, and below them path loss and kernel drops.
std::optional<chart> instance_chart(const run_summary& s, const std::string& id);
// A latency probe's round trips per interval (p50, p99, max) over the run, idle before T0 shaded.
std::optional<chart> latency_chart(const run_summary& s, const std::string& id);
// Busy CPU per host during the run, split into user, system, softirq, irq and steal; nullopt when no
// host figures came back.
std::optional<chart> cpu_chart(const run_summary& s, const std::string& id);
// A rate search (its search.json; charts_search.cpp): every trial's intended load against its loss ratio,
// each goal's loss ratio and relevant bounds marked; nullopt for a search recorded by an older harness.
std::optional<chart> search_chart(const nlohmann::json& search, const std::string& id);
// compare.html's chart: each measurement's change in received pps against the baseline, with the interval
// of the difference where both sides have repeats.
std::optional<chart> change_chart(const std::vector<comparison>& all, const std::string& id);

}  // namespace harness
