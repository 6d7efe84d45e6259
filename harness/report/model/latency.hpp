#pragma once
// Round trips: request/response runs and latency probes (docs/reports.md#round-trips).
#include "core/result/latency_histogram.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness {

struct run_record;

// t_s: the interval's end after T0 (negative: before the load).
struct latency_point {
  double t_s = 0;
  double p50_us = 0, p99_us = 0, max_us = 0;
  std::uint64_t count = 0;
};

// `idle`: intervals wholly before T0; `loaded`: wholly inside the load's steady part.
struct probe_summary {
  double pps = 0, idle_s = 0;
  std::uint32_t size = 0;
  nb::latency_histogram idle, loaded;
  std::vector<latency_point> series;
  std::uint64_t transactions = 0, timeouts = 0;
  std::string error;  // failed or unreconciled: no figures
};

struct rr_summary {
  nb::latency_histogram latency;
  std::uint64_t transactions = 0, timeouts = 0;
  double transactions_per_second = 0;
};

std::optional<probe_summary> summarize_probe(const run_record& r);
// Nothing unless request/response with figures from every instance.
std::optional<rr_summary> summarize_rr(const run_record& r);

// "p50 120.4 µs, p90 …, p99 …, p99.9 …, max … (N round trips)"
std::string latency_words(const nb::latency_histogram& h);
nlohmann::json to_json(const probe_summary& p);
nlohmann::json to_json(const rr_summary& s);

}  // namespace harness
