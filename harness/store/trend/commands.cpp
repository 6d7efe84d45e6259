#include "harness/store/trend/commands.hpp"

#include "core/base/text.hpp"
#include "harness/report/model/skew.hpp"
#include "harness/report/results.hpp"
#include "harness/store/record.hpp"
#include "harness/store/trend/trends.hpp"

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace harness::store {

namespace {

// A mistyped --db is said, not answered with an empty history.
database open_existing(const fs::path& db) {
  if (!fs::exists(db))
    throw store_error(
        fmt::format("no results database at {} (`harness run` records one, `harness db import DIR...` "
                    "makes one from results folders)",
                    db.string()));
  return database(db);
}

int judge(database& db, const store_options& o, const fs::path& dir, const std::string& folder, int status,
          std::optional<judgement>* verdict, std::vector<series>& plan_history) {
  const auto j = judge_folder(db, folder, o.regress, &plan_history);
  write_json(dir / "regressions.json", to_json(j, o.regress));
  fmt::print(o.out, "{}", judgement_text(j));
  if (verdict) *verdict = j;
  if (!j.any_regression()) return status;
  const auto n =
      std::count_if(j.measurements.begin(), j.measurements.end(), [](const judged& m) { return m.regression; });
  fmt::print(stderr, "harness: {} regression(s) against {} (regressions.json)\n", n, nb::printable(j.baseline_kind));
  return o.fail_on_regression && (status == 0 || status == skewed_status) ? regression_status : status;
}

}  // namespace

recorded record_run(const store_options& o, const fs::path& results_root, const fs::path& dir,
                    std::vector<run_summary> runs, std::vector<nlohmann::json> searches, int status,
                    std::optional<judgement>* verdict) {
  if (!o.enabled) return {status, {false, "not recorded in a results database (--no-db)", 0, {}}};
  const fs::path path = o.db.empty() ? results_root / default_db_name : o.db;
  try {
    database db(path);
    const auto f = read_folder(dir, std::move(runs), std::move(searches));
    record(db, f);
    fmt::print(o.out, "store: {}\n", path.string());
    std::vector<series> plan_history;
    const int judged_status = judge(db, o, dir, f.name, status, verdict, plan_history);
    return {judged_status, history_of_run(db, f.name, o.regress, &plan_history)};
  } catch (const std::exception& e) {
    // The run's files are whole: an import repairs the store.
    fmt::print(stderr, "harness: run not recorded in the results database: {}\n", nb::printable(e.what()));
    return {status, {false, fmt::format("not recorded in the results database: {}", e.what()), 0, {}}};
  }
}

int db_import(const fs::path& path, const std::vector<fs::path>& dirs) {
  database db(path);
  int status = 0;
  for (const auto& dir : dirs) {
    try {
      const auto f = read_folder(dir);
      record(db, f);
      fmt::print("imported {}: {} run(s), {} search(es), {}\n", nb::printable(f.name), f.runs.size(), f.searches.size(),
                 f.interrupted         ? "interrupted"
                 : !f.problems.empty() ? "failed"
                 : f.skews.empty()     ? "ok"
                                       : "skewed");
    } catch (const store_error&) {
      throw;  // the next folder would fail alike
    } catch (const std::exception& e) {
      fmt::print(stderr, "harness: {}: not imported: {}\n", nb::printable(dir.string()), nb::printable(e.what()));
      status = 1;
    }
  }
  return status;
}

int db_baseline(const fs::path& path, const std::string& folder) {
  auto db = open_existing(path);
  const std::string plan = mark_baseline(db, folder);
  fmt::print("baseline of plan {}: {}\n", nb::printable(plan), nb::printable(folder_name(folder)));
  return 0;
}

int history(const history_request& r) {
  auto db = open_existing(r.db);
  history_filter f{r.plan, r.test, std::nullopt};
  if (!r.since.empty()) f.since_utc = parse_since(r.since);
  const auto s = read_history(db, f);
  if (!r.html.empty()) {
    write_file(r.html, history_page(db, s, f, r.regress));
    fmt::print("history page: {} ({} measurement(s))\n", r.html.string(), s.size());
    return 0;
  }
  if (r.json) fmt::print("{}\n", history_json(s).dump(2));
  else if (r.csv) fmt::print("{}", history_csv(s));
  else fmt::print("{}", history_text(s));
  return 0;
}

}  // namespace harness::store
