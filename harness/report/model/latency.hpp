#pragma once
// Round trips in the reports: a request/response run's transactions, merged exactly over its instances,
// and a latency probe's round trips idle and under the run's load, with their course over the run.
#include "core/result/latency_histogram.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness {

struct run_record;

// One interval of a latency series: its end, in seconds after T0 (negative: before the load started).
struct latency_point {
  double t_s = 0;
  double p50_us = 0, p99_us = 0, max_us = 0;
  std::uint64_t count = 0;
};

// A latency probe (UDP_RR at a low rate) over one run. Each netload interval carries its own round trips'
// buckets, so the two parts are exact merges: `idle` the intervals wholly before T0, `loaded` those
// wholly inside the load's steady part (after the warm-up, before its end).
struct probe_summary {
  double pps = 0, idle_s = 0;
  std::uint32_t size = 0;
  nb::latency_histogram idle, loaded;
  std::vector<latency_point> series;
  std::uint64_t transactions = 0, timeouts = 0;
  std::string error;  // the probe failed or does not reconcile: its figures are not reported
};

// A request/response run: every instance's round trips merged bucket by bucket, transactions summed.
struct rr_summary {
  nb::latency_histogram latency;
  std::uint64_t transactions = 0, timeouts = 0;
  double transactions_per_second = 0;
};

std::optional<probe_summary> summarize_probe(const run_record& r);
// Nothing when the run is not request/response or an instance has no figures.
std::optional<rr_summary> summarize_rr(const run_record& r);

// "p50 120.4 µs, p90 …, p99 …, p99.9 …, max … (N round trips)"
std::string latency_words(const nb::latency_histogram& h);
nlohmann::json to_json(const probe_summary& p);
nlohmann::json to_json(const rr_summary& s);

}  // namespace harness
