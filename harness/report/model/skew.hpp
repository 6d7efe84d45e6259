#pragma once
// A start later than T0 + the run's start-skew bound. The late instance's figures are its own and true
// (netload paces and counts from its own start), so its run keeps them: summed, reported and recorded,
// and marked "skewed" with who started how late, instead of voided as a failed instance voids it.
#include "harness/report/model/aggregate.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace harness {

// The exit status of `harness run` and `harness report` when every run has its figures but one or more
// started an instance late (3, a failed run, wins over it; 4, a regression, too).
inline constexpr int skewed_status = 5;

// Whether the result started after T0 + the run's bound (run.json's skew_bound_ms).
bool started_late(const nb::test_result& t, const run_record& r);
// The run's instances that did, with their offsets.
std::vector<late_start> late_starts(const run_record& r);
// "ok", "skewed", "failed" or "interrupted": summary.json's "status".
std::string run_status(const run_summary& s);
// "02-b started 253.9 ms after T0 (start-skew bound 20 ms)", several instances in one sentence; "" for none.
std::string late_words(const run_summary& s);
// summary.json's "skew": {"bound_ms", "late": [{"instance", "start_offset_ms"}]}.
nlohmann::json skew_json(const run_summary& s);
// "run ID skewed: <late_words>" for each skewed run, as stderr and the results database say it.
std::vector<std::string> folder_skews(const std::vector<run_summary>& runs);

}  // namespace harness
