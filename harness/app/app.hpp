#pragma once
// The harness commands, for main.cpp: run a plan (or dry-run it), check its hosts, rebuild reports.
#include "harness/plan/overrides.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace harness {

struct run_request {
  std::string plan_path;  // empty: the embedded default plan (configs/loopback.toml)
  bool dry_run = false;
  std::filesystem::path results_root = "results";
  std::string bin_dir;  // --bin-dir, else found next to this program
  std::string self_exe;
  bool live = true;
  bool allow_offset = false;  // --allow-offset: correct each host's start instant by its clock offset
  plan_overrides overrides;   // --duration, --repeats, --only
  // The results database (harness/store, called by app.cpp after the reports): --db (empty: under
  // results_root), --no-db, --fail-on-regression, --baseline-runs, --min-change.
  std::filesystem::path db;
  bool record = true;
  bool fail_on_regression = false;
  int baseline_runs = 5;
  double min_change_percent = 5;
};

// Each returns the process exit status; errors are thrown to main.
int run_plan(const run_request& req);
// `harness check`: every host of the plan checked (reachable, versions, clock, CPUs, kernel, features,
// path MTU), the table on stdout; 0 when no host has an error, 1 otherwise.
int check_plan(const run_request& req);
int rebuild_reports(const std::filesystem::path& dir);
// `harness compare A B [C ...]`: each later folder against the first, the table on stdout, compare.md and
// compare.json written into out_dir (made when missing). 0, whatever the verdicts; errors thrown (1).
int compare_results(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out_dir);

}  // namespace harness
