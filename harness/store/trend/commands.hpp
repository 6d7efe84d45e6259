#pragma once
// The store's commands: a run recorded and judged, `harness db import|baseline`, `harness history`.
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

// Under --results when no --db is given.
inline constexpr const char* default_db_name = "netbench.sqlite";
inline constexpr int regression_status = 4;

struct store_options {
  std::filesystem::path db;
  bool enabled = true;  // --no-db
  bool fail_on_regression = false;
  regression_options regress;
  std::FILE* out = stdout;  // `harness watch`: stderr, as stdout is its own
};

struct recorded {
  int status = 0;
  run_history history;  // report.html's trends, or why none
};

// Recorded and judged. A store error is one stderr line, status kept; a regression under fail_on_regression: 4.
recorded record_run(const store_options& o, const std::filesystem::path& results_root, const std::filesystem::path& dir,
                    std::vector<run_summary> runs, std::vector<nlohmann::json> searches, int status,
                    std::optional<judgement>* verdict = nullptr);

// Each folder recorded anew; 1 when one could not be read (named on stderr, the others imported).
int db_import(const std::filesystem::path& db, const std::vector<std::filesystem::path>& dirs);
int db_baseline(const std::filesystem::path& db, const std::string& folder);

struct history_request {
  std::filesystem::path db = std::filesystem::path("results") / default_db_name;
  std::string plan, test, since;
  bool json = false, csv = false;
  std::filesystem::path html;  // empty: no page
  regression_options regress;
};
int history(const history_request& r);

}  // namespace harness::store
