#pragma once
// report.html's charts, each a gnuplot script built from the figures the tables show, so chart and table
// never disagree.
#include "harness/report/compare.hpp"
#include "harness/report/model/aggregate.hpp"
#include "harness/report/model/stats.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace harness {

struct chart {
  std::string name;     // for the page and its test: "sweep-pps"
  std::string caption;  // one sentence under it
  std::string svg;      // empty when it could not be drawn
  std::string error;
};

enum class sweep_metric { pps, mbps };

// Received (solid, with intervals) and sent (dashed) against message size per role; nullopt unless a
// line has two sizes.
std::optional<chart> sweep_chart(const std::vector<repeat_group>& groups, sweep_metric metric, const std::string& id);
// Per interval, each instance a thin line, the steady window shaded; nullopt without samples.
std::optional<chart> timeline_chart(const run_summary& s, const std::string& id);
std::optional<chart> instance_chart(const run_summary& s, const std::string& id);
// p50, p99 and max per interval, idle before T0 shaded.
std::optional<chart> latency_chart(const run_summary& s, const std::string& id);
// Busy CPU per host by user, system, softirq, irq and steal; nullopt without host figures.
std::optional<chart> cpu_chart(const run_summary& s, const std::string& id);
// Trials' intended load against loss ratio, with each goal's ratio and bounds; nullopt for an older record.
std::optional<chart> search_chart(const nlohmann::json& search, const std::string& id);
// compare.html's: each measurement's change in received pps, with the difference's interval.
std::optional<chart> change_chart(const std::vector<comparison>& all, const std::string& id);

}  // namespace harness
