#pragma once
// A results folder judged against its baseline, per measurement (plan, test, role, message size, route):
// the last `baseline_runs` folders of the plan that measured it, or the folder marked with
// `harness db baseline`. A regression is a received packet rate below the baseline's 95 % interval (its
// mean when it has one run) by at least `min_change_percent` of the baseline's mean.
#include "harness/report/model/stats.hpp"
#include "harness/store/database.hpp"
#include "harness/store/history.hpp"

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
  spread current, baseline;  // received pps over the ok runs
  std::vector<std::string> baseline_folders;
  double change_percent = 0;  // (current - baseline) / baseline
  bool regression = false;
  // The latest level shift the change-point method found in the series up to this folder (later
  // folders unseen, so a verdict does not change afterwards), and the folder where it began.
  std::optional<change_point> shift;
  std::string shift_begins;
};

struct judgement {
  std::string folder, plan, baseline_kind;  // "last N runs" or "marked: FOLDER"
  std::vector<judged> measurements;         // those with a baseline and an ok current run
  std::vector<std::string> without_baseline;
  bool any_regression() const;
};

// `plan_history`, when given, receives the plan's series read for it (history_of_run takes them: one
// read of the store per recorded run).
judgement judge_folder(database& db, const std::string& folder, const regression_options& o,
                       std::vector<series>* plan_history = nullptr);
// Point `at` of a series against its baseline (`marked`: the plan's marked folder, or empty); nullopt
// when it has no figures or no baseline. Its `shift` is left empty (judge_folder fills it in).
std::optional<judged> judge_point(const series& s, std::size_t at, const std::string& marked,
                                  const regression_options& o);
// Points [first, end) of a series, each judged as judge_point does (the marked folder found once).
std::vector<std::optional<judged>> judge_points(const series& s, std::size_t first, std::size_t end,
                                                const std::string& marked, const regression_options& o);
// The plan's marked baseline folder, or empty.
std::string marked_baseline(database& db, const std::string& plan);
// Marks a folder (by name or path) as its plan's baseline; returns the plan. Throws when not stored.
std::string mark_baseline(database& db, const std::string& folder);

std::string judgement_text(const judgement& j);
nlohmann::json to_json(const judgement& j, const regression_options& o);

}  // namespace harness::store
