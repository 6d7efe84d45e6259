#pragma once
// One verdict per test: which of the two hosts, or the path between them, set the figure. A pure
// function of the result's counts and both hosts' deltas, so the harness can re-judge old results.
#include "core/wire/result.hpp"

namespace nb {

// Whether the test was paced and met its pace (--pps / --rate): a missed target is how a paced sender
// shows that it could not keep up.
struct pacing_outcome {
  bool paced = false;
  bool missed = false;
  double error_percent = 0;  // sent vs target, negative when short
};

// Thresholds, and why (measured on loopback with 100-Hz tick accounting, see verdict.cpp):
inline constexpr double saturated_cpu_pct = 90;       // busy share of one CPU that counts as "all of it"
inline constexpr double livelock_softirq_pct = 50;    // softirq share of that CPU: receive livelock
inline constexpr double saturated_process_pct = 90;   // per stream, of one core: a sender at its maximum

limit_verdict judge_limit(const test_result& r, const pacing_outcome& pacing);
// The same, the pacing from the result's target: missed when not met and short of it (a sender above
// its target is no limit).
limit_verdict judge_limit(const test_result& r);

}  // namespace nb
