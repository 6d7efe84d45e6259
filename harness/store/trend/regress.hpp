#pragma once
// A folder judged per measurement against its plan's last `baseline_runs` folders or its marked baseline:
// a regression is received pps below the baseline's 95 % interval (one run: its mean) by at least
// `min_change_percent` of its mean.
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
  spread current, baseline;  // received pps of the ok runs
  std::vector<std::string> baseline_folders;
  double change_percent = 0;
  bool regression = false;
  // The latest shift up to this folder (later ones unseen: the verdict stays), and where it began.
  std::optional<change_point> shift;
  std::string shift_begins;
};

struct judgement {
  std::string folder, plan, baseline_kind;
  std::vector<judged> measurements;  // those with a baseline and figures
  std::vector<std::string> without_baseline;
  bool any_regression() const;
};

// plan_history receives the series read, for history_of_run.
judgement judge_folder(database& db, const std::string& folder, const regression_options& o,
                       std::vector<series>* plan_history = nullptr);
// None without figures or a baseline; `shift` left empty (judge_folder's).
std::optional<judged> judge_point(const series& s, std::size_t at, const std::string& marked,
                                  const regression_options& o);
// Points [first, end), as judge_point judges each.
std::vector<std::optional<judged>> judge_points(const series& s, std::size_t first, std::size_t end,
                                                const std::string& marked, const regression_options& o);
std::string marked_baseline(database& db, const std::string& plan);
// By name or path, an ok folder only; returns the plan.
std::string mark_baseline(database& db, const std::string& folder);

std::string judgement_text(const judgement& j);
nlohmann::json to_json(const judgement& j, const regression_options& o);

}  // namespace harness::store
