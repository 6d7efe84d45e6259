#pragma once
// What `harness run` and `harness watch` share: the plan loaded for a run, and a finished run's reports,
// console summary, exit status and record in the results database.
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

// The request's plan with its overrides applied (each said on stderr); a plan whose lab is not up is
// refused here, before anything starts.
plan load_for_run(const run_request& req);

struct finished_run {
  std::filesystem::path dir;
  std::vector<run_summary> runs;  // as summary.json has them
  std::vector<nlohmann::json> searches;
  int status = 0;                           // the exit status `harness run` gives
  int signal = 0;                           // the signal that stopped it, 0 when none did
  std::optional<store::judgement> verdict;  // the store's, none when nothing was recorded
};

// After runner::run_all returned `dir`: report.html written, the console summary (and the store's
// lines) on `out`, the status computed, the folder recorded in the store and judged. An empty `dir` (a
// stop before the first run): said on stderr, status 128 + the signal, nothing else.
finished_run finish_run(const run_request& req, const runner& r, const std::filesystem::path& dir, std::FILE* out);

}  // namespace harness
