#pragma once
// Which host, or the path, set a test's figure; pure, so the harness can re-judge old results.
#include "core/result/result.hpp"

#include <optional>
#include <string>

namespace nb {

struct pacing_outcome {
  bool paced = false;
  bool missed = false;
  double error_percent = 0;  // sent vs target, negative when short
};

// 100-Hz ticks read a saturated CPU as 90-100 % (docs/verdicts.md#thresholds).
inline constexpr double saturated_cpu_pct = 90;
inline constexpr double livelock_softirq_pct = 50;   // of that CPU: receive livelock
inline constexpr double saturated_process_pct = 90;  // per stream, of one core

limit_verdict judge_limit(const test_result& r, const pacing_outcome& pacing);
// The pacing from r.target: a sender above its target is no limit.
limit_verdict judge_limit(const test_result& r);

// Why an overdriven receiver's figure is not the rate to quote; needs r.verdict.
std::optional<std::string> figure_meaning(const test_result& r);

}  // namespace nb
