#pragma once
// One verdict per test: which of the two hosts, or the path between them, set the figure. A pure
// function of the result's counts and both hosts' deltas, so the harness can re-judge old results.
#include "core/result/result.hpp"

#include <optional>
#include <string>

namespace nb {

// Whether the test was paced and met its pace (--pps / --rate): a missed target is how a paced sender
// shows that it could not keep up.
struct pacing_outcome {
  bool paced = false;
  bool missed = false;
  double error_percent = 0;  // sent vs target, negative when short
};

// Thresholds, and why (measured on loopback with 100-Hz tick accounting, see verdict.cpp):
inline constexpr double saturated_cpu_pct = 90;      // busy share of one CPU that counts as "all of it"
inline constexpr double livelock_softirq_pct = 50;   // softirq share of that CPU: receive livelock
inline constexpr double saturated_process_pct = 90;  // per stream, of one core: a sender at its maximum

limit_verdict judge_limit(const test_result& r, const pacing_outcome& pacing);
// The same, the pacing from the result's target: missed when not met and short of it (a sender above
// its target is no limit).
limit_verdict judge_limit(const test_result& r);

// What the received figure of an unpaced UDP_STREAM means when the receiver's side set it (limit
// receiver-cpu, receiver-socket or before-socket): what an overdriven receiver kept, which is neither the
// sender's speed nor the rate the receiver carries without loss; one sentence, for the table (beside the
// figure) and the JSON ("receiver_note"). Nothing for a paced test, another test or another limit, whose
// figures mean what they say. Needs r.verdict.
std::optional<std::string> figure_meaning(const test_result& r);

}  // namespace nb
