#pragma once
// netload --search's output: a line per trial as it ends, then per goal its bounds and conditional
// throughput; or with --json one object whose "search" block is the search record the harness writes too
// (core/search/search_record.hpp), with netload's tests and options beside it.
#include "core/result/result.hpp"
#include "core/search/mlr_search.hpp"
#include "netload/cli/cli.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace nb::load {

// One trial as netload ran it: the test's result, and what the search was told (or would have been).
struct search_trial {
  int n = 0;           // 0: the unpaced MRR trial, then 1, 2, ...
  std::string reason;  // why this load (the search's words); "MRR" for the unpaced trial
  nb::search::trial_result measured;
  test_result result;
  bool repeated = false;  // load-limited and run once more at the same load: the search never saw it
  bool interrupted() const noexcept { return result.interrupted.has_value(); }
};

// How the search ended, beyond its goals.
struct search_end {
  std::string cap;       // "" or which bound stopped it first: "--max-trials 200", trials failing, ...
  std::string signal;    // "" or the user's stop: "SIGINT", "SIGTERM"
  double elapsed_s = 0;  // wall-clock seconds from the MRR trial's start to the end
  int repeated = 0;      // load-limited trials run once more (search_trial::repeated)
};

// The header line and the table's column names: the goals, the message size, what a load means.
std::string search_heading(const client_options& o, const std::vector<nb::search::goal>& goals);
// A trial's line; `s` (null before the search began) gives each goal's class of the trial's load so far.
std::string search_trial_line(const search_trial& t, const std::vector<nb::search::goal>& goals,
                              const nb::search::mlr_search* s);
// Per goal: relevant lower and upper bound, conditional throughput (pps and payload Mbit/s), regular or
// not and why; then how the search ended and what it cost.
std::string search_results_text(const client_options& o, const nb::search::mlr_search* s, const search_end& end);
// The --json object: {"search": ..., "mrr": ..., "tests": ..., "interrupted": ..., "options": ...}. `trials`:
// every trial netload ran, the MRR first, an interrupted one (which the search never saw) last.
nlohmann::json search_json(const client_options& o, const nb::search::mlr_search* s,
                           const std::vector<search_trial>& trials, const search_end& end);

}  // namespace nb::load
