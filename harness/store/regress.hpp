#pragma once
// A results folder judged against its baseline, per measurement (plan, test, role, message size, route):
// the last `baseline_runs` folders of the plan that measured it, or the folder marked with
// `harness db baseline`. A regression is a received packet rate below the baseline's 95 % interval (its
// mean when it has one run) by at least `min_change_percent` of the baseline's mean.
#include "harness/report/stats.hpp"
#include "harness/store/database.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace harness::store {

struct regression_options {
  int baseline_runs = 5;
  double min_change_percent = 5;
};

struct judged {
  std::string measurement, test, role, route;
  std::int64_t message_size = 0;
  spread current, baseline;           // received pps over the ok runs
  std::vector<std::string> baseline_folders;
  double change_percent = 0;          // (current - baseline) / baseline
  bool regression = false;
};

struct judgement {
  std::string folder, plan, baseline_kind;  // "last N runs" or "marked: FOLDER"
  std::vector<judged> measurements;         // those with a baseline and an ok current run
  std::vector<std::string> without_baseline;
  bool any_regression() const;
};

judgement judge_folder(database& db, const std::string& folder, const regression_options& o);
// Marks a folder (by name or path) as its plan's baseline; returns the plan. Throws when not stored.
std::string mark_baseline(database& db, const std::string& folder);

std::string judgement_text(const judgement& j);
nlohmann::json to_json(const judgement& j, const regression_options& o);

}  // namespace harness::store
