// The results store with many folders: reading a plan's history, judging its last folder and drawing
// report.html's history stay O(n log n) in the folders (counted, not timed: the time is printed only).
#include "harness/store/database.hpp"
#include "harness/store/history.hpp"
#include "harness/store/trend/regress.hpp"
#include "harness/store/trend/trends.hpp"

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>

namespace fs = std::filesystem;
using namespace harness::store;

namespace {

struct scale_dir {
  scale_dir() {
    char tmpl[] = "/tmp/netbench-store-scale-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~scale_dir() { fs::remove_all(path); }
  scale_dir(const scale_dir&) = delete;
  scale_dir& operator=(const scale_dir&) = delete;
  fs::path path;
};

std::string scale_folder_name(int i) { return fmt::format("p-2026{:04d}T{:06d}Z", 1 + i / 10000, i % 10000); }

// `n` folders of plan p, one run of one measurement each, in one transaction (record() would take one
// per folder: minutes for 20 000).
void fill(database& db, int n) {
  SQLite::Transaction t(db.sql());
  SQLite::Statement folder(
      db.sql(),
      "INSERT INTO folders (id, name, path, plan, started_utc, status, runs_failed, environment, plan_toml,"
      " imported_utc) VALUES (?1, ?2, '/nowhere/' || ?2, 'p', ?1, 'ok', 0, '{}', '', 0)");
  SQLite::Statement run(
      db.sql(),
      "INSERT INTO runs (folder_id, seq, run, measurement, test, role, kind, topology, message_size, load,"
      " route, search_trial, ok, interrupted, failures, received_pps, summary) VALUES (?1, 0, 't-m64-r1',"
      " 't-m64', 't', 'r', 'udp', 'pair', 64, '', '', 0, 1, 0, '[]', ?2, '{}')");
  for (int i = 1; i <= n; ++i) {
    folder.bind(1, i);
    folder.bind(2, scale_folder_name(i));
    folder.exec();
    folder.reset();
    run.bind(1, i);
    run.bind(2, 1000.0 + (i * 7919 % 13));  // a steady level with a little wobble: no level shift
    run.exec();
    run.reset();
  }
  t.commit();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("harness store: 20 000 folders are read with an index, not a scan per folder", "[harness][store]") {
  scale_dir t;
  database db(t.path / "s.sqlite");
  constexpr int n = 20000;
  fill(db, n);
  auto t0 = std::chrono::steady_clock::now();
  history_cost cost;
  const auto h = read_history(db, {"p", "", std::nullopt}, &cost);
  const double read_s = seconds_since(t0);
  REQUIRE(h.size() == 1);
  REQUIRE(h[0].points.size() == static_cast<std::size_t>(n));
  CHECK(cost.rows == static_cast<std::size_t>(n));
  // A map's find and insert: a few log2(n) comparisons a row (~48 here). A scan of the points read
  // before each row would be n^2 / 2 = 2e8.
  const double bound = static_cast<double>(n) * 4 * (std::log2(n) + 2);
  INFO("comparisons " << cost.comparisons << ", bound " << bound);
  CHECK(static_cast<double>(cost.comparisons) <= bound);

  t0 = std::chrono::steady_clock::now();
  std::vector<series> plan_history;
  const auto j = judge_folder(db, scale_folder_name(n), {}, &plan_history);
  const auto r = history_of_run(db, scale_folder_name(n), {}, &plan_history);
  const double judge_s = seconds_since(t0);
  REQUIRE(j.measurements.size() == 1);
  CHECK_FALSE(j.any_regression());
  REQUIRE(r.trends.size() == 1);
  CHECK(r.trends[0].points.size() == static_cast<std::size_t>(report_history_runs));
  CHECK(r.trends[0].points.back().current);
  fmt::print("store with {} folders: history read in {:.2f} s ({} comparisons), judged and charted in {:.2f} s\n", n,
             read_s, cost.comparisons, judge_s);
}
