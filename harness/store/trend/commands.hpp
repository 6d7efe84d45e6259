#pragma once
// The store's commands, for the app layer: a run recorded (and judged against its baseline) after its
// reports, `harness db import`, `harness db baseline` and `harness history`.
#include "harness/report/html/trend.hpp"
#include "harness/report/model/aggregate.hpp"
#include "harness/store/history.hpp"
#include "harness/store/trend/regress.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace harness::store {

// The store of `harness run`'s --results root when no --db is given.
inline constexpr const char* default_db_name = "netbench.sqlite";
inline constexpr int regression_status = 4;

struct store_options {
  std::filesystem::path db;  // empty: <results root>/netbench.sqlite
  bool enabled = true;       // --no-db
  bool fail_on_regression = false;
  regression_options regress;
  std::FILE* out = stdout;  // the store's lines and the judgement (`harness watch`: stderr, its own line on stdout)
};

struct recorded {
  int status = 0;
  run_history history;  // for report.html: the run's measurements over the store's last runs, or why none
};

// After a run's files are written: the folder recorded and judged against its baseline (the console
// and regressions.json in the folder). A store that cannot be written is one line on stderr and leaves
// `status` as it is; a regression with fail_on_regression turns an ok status into 4.
// `verdict`, when given, receives the judgement (left empty when nothing was recorded).
recorded record_run(const store_options& o, const std::filesystem::path& results_root, const std::filesystem::path& dir,
                    std::vector<run_summary> runs, std::vector<nlohmann::json> searches, int status,
                    std::optional<judgement>* verdict = nullptr);

// Each folder read from its files and recorded, replacing an earlier record of it. 0, or 1 when a folder
// could not be read (each named on stderr; the others are imported).
int db_import(const std::filesystem::path& db, const std::vector<std::filesystem::path>& dirs);
int db_baseline(const std::filesystem::path& db, const std::string& folder);

struct history_request {
  std::filesystem::path db = std::filesystem::path("results") / default_db_name;
  std::string plan, test, since;
  bool json = false, csv = false;
  std::filesystem::path html;  // --html: the page's path (empty: no page)
  regression_options regress;  // the page's regression marks
};
int history(const history_request& r);

}  // namespace harness::store
