#pragma once
// A start later than T0 + the skew bound: the run keeps its figures, marked skewed (docs/reports.md).
#include "harness/report/model/aggregate.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace harness {

// Exit status: every run has figures but one started late; 3 (failed) and 4 (regression) win over it.
inline constexpr int skewed_status = 5;

bool started_late(const nb::test_result& t, const run_record& r);
std::vector<late_start> late_starts(const run_record& r);
// summary.json's "status".
std::string run_status(const run_summary& s);
// "02-b started 253.9 ms after T0 (start-skew bound 20 ms)"; "" for none.
std::string late_words(const run_summary& s);
nlohmann::json skew_json(const run_summary& s);
// "run ID skewed: <late_words>", for stderr and the results database.
std::vector<std::string> folder_skews(const std::vector<run_summary>& runs);

}  // namespace harness
