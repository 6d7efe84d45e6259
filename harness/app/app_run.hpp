#pragma once
// What `harness run` and `harness watch` share.
#include "harness/app/app.hpp"
#include "harness/plan/plan.hpp"
#include "harness/report/model/aggregate.hpp"
#include "harness/run/runner.hpp"
#include "harness/store/trend/regress.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

namespace harness {

// Overrides applied (each said on stderr); a plan whose lab is not up refused before anything starts.
plan load_for_run(const run_request& req);

struct finished_run {
  std::filesystem::path dir;
  std::vector<run_summary> runs;  // as summary.json has them
  std::vector<nlohmann::json> searches;
  int status = 0;                           // the exit status
  int signal = 0;                           // the one that stopped it, or 0
  std::optional<store::judgement> verdict;  // none when nothing was recorded
};

// Reports, the console summary on `out`, the status, the store's record. An empty `dir` (a stop before the
// first run): said on stderr, status 128 + the signal.
finished_run finish_run(const run_request& req, const runner& r, const std::filesystem::path& dir, std::FILE* out);

}  // namespace harness
