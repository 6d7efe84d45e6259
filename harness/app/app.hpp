#pragma once
// The harness commands, for main.cpp.
#include "harness/plan/overrides.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace harness {

struct run_request {
  std::string plan_path;  // empty: the embedded default plan (configs/loopback.toml)
  bool dry_run = false;
  std::filesystem::path results_root = "results";
  std::string bin_dir;  // else found next to this program
  std::string self_exe;
  bool live = true;
  bool allow_offset = false;  // each host's start instant corrected by its clock offset
  plan_overrides overrides;
  // The results database (db empty: under results_root).
  std::filesystem::path db;
  bool record = true;
  bool fail_on_regression = false;
  int baseline_runs = 5;
  double min_change_percent = 5;
};

// Each returns the process exit status; errors are thrown to main.
int run_plan(const run_request& req);
// `harness check`: the hosts' table on stdout; 1 when a host has an error.
int check_plan(const run_request& req);
int rebuild_reports(const std::filesystem::path& dir);
// Each later folder against the first, into out_dir; 0 whatever the verdicts.
int compare_results(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out_dir);

}  // namespace harness
