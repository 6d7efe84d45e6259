// The results store on its own: the schema and its migration from an older file, a damaged file named
// with its repair, a folder's figures read back as recorded (failed runs as failures, never zeros), a
// second record of a folder replacing the first, and the regression verdicts on synthetic series.
#include "core/search/search_record.hpp"
#include "harness/store/database.hpp"
#include "harness/store/history.hpp"
#include "harness/store/record.hpp"
#include "harness/store/schema.hpp"
#include "harness/store/trend/regress.hpp"
#include "harness/store/trend/trends.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace harness::store;

namespace {

struct temp_dir {
  temp_dir() {
    char tmpl[] = "/tmp/netbench-store-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~temp_dir() { fs::remove_all(path); }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  fs::path path;
};

harness::run_summary run(const std::string& id, int repeat, double received_pps, bool ok = true) {
  harness::run_summary s;
  s.run.test = "t";
  s.run.role = "device as server";
  s.run.message_size = 64;
  s.run.id = fmt::format("{}-r{}", id, repeat);
  s.run.spec = {{"id", s.run.id}, {"repeat", repeat}, {"requested_pps", nullptr}, {"requested_rate", nullptr}};
  s.ok = ok;
  if (!ok) {
    s.failures.push_back("01-a: netload failed");
    return s;
  }
  s.sender = {1000, 64000, received_pps * 1.25, received_pps * 1.25 * 512};
  s.receiver = {800, 51200, received_pps, received_pps * 512};
  s.lost = 200;
  s.path_loss = 150;
  s.kernel_drops = 50;
  s.loss_percent = 20;
  return s;
}

folder_content folder(const std::string& name, double started, std::vector<harness::run_summary> runs) {
  folder_content f;
  f.path = "/nowhere/" + name;
  f.name = name;
  f.plan = plan_of_folder(name);
  f.started_utc = started;
  f.environment = {{"harness_version", "test"}, {"hosts", {{"a", {{"address", "127.0.0.2"}, {"launcher", "local"}}}}}};
  for (const auto& r : runs)
    if (!r.ok) f.problems.push_back("run failed");
  f.runs = std::move(runs);
  return f;
}

std::int64_t count(database& db, const char* table) {
  return db.sql().execAndGet(fmt::format("SELECT count(*) FROM {}", table)).getInt64();
}

}  // namespace

TEST_CASE("harness store: a new file has the current schema, in WAL mode", "[harness][store]") {
  temp_dir t;
  database db(t.path / "sub" / "netbench.sqlite");
  CHECK(db.version() == schema_version);
  CHECK(db.sql().execAndGet("PRAGMA journal_mode").getString() == "wal");
  for (const char* table : {"folders", "hosts", "runs", "instances", "searches", "baselines"})
    CHECK(db.sql().tableExists(table));
}

TEST_CASE("harness store: a version 1 file is migrated to the current schema, keeping its rows", "[harness][store]") {
  temp_dir t;
  const fs::path file = t.path / "old.sqlite";
  {
    SQLite::Database old(file.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    for (const char* s : migration_to(1)) old.exec(s);
    old.exec("PRAGMA user_version = 1");
    old.exec(
        "INSERT INTO folders (name, path, plan, status, runs_failed, environment, plan_toml, imported_utc)"
        " VALUES ('p-20261201T000000Z', '/x', 'p', 'ok', 0, '{}', '', 0)");
    REQUIRE_FALSE(old.tableExists("baselines"));
  }
  database db(file);
  CHECK(db.version() == schema_version);
  CHECK(db.sql().tableExists("baselines"));
  CHECK(count(db, "folders") == 1);
  CHECK(mark_baseline(db, "p-20261201T000000Z") == "p");
}

TEST_CASE("harness store: a newer schema is refused, not overwritten", "[harness][store]") {
  temp_dir t;
  const fs::path file = t.path / "new.sqlite";
  SQLite::Database(file.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE).exec("PRAGMA user_version = 99");
  CHECK_THROWS_WITH(database(file), Catch::Contains("schema version 99, newer than"));
}

TEST_CASE("harness store: a damaged file is named, with `harness db import` as its repair", "[harness][store]") {
  temp_dir t;
  const fs::path file = t.path / "netbench.sqlite";
  std::ofstream(file) << std::string(4096, 'x');
  try {
    database db(file);
    FAIL("a file of junk opened as a database");
  } catch (const store_error& e) {
    const std::string what = e.what();
    CHECK_THAT(what,
               Catch::Contains(file.string()) && Catch::Contains("damaged") && Catch::Contains("harness db import"));
  }
}

TEST_CASE("harness store: a folder's figures read back as recorded, failed runs with none", "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");
  record(db, folder("p-20261201T000000Z", 1000, {run("t-m64", 1, 1234.5678), run("t-m64", 2, 1300.25)}));
  record(db, folder("p-20261202T000000Z", 2000, {run("t-m64", 1, 0, false)}));
  const auto h = read_history(db, {});
  REQUIRE(h.size() == 1);
  REQUIRE(h[0].points.size() == 2);
  const auto& first = h[0].points[0];
  CHECK(first.folder == "p-20261201T000000Z");
  REQUIRE(first.runs.size() == 2);
  CHECK(first.runs[0].received_pps == 1234.5678);
  CHECK(first.runs[0].sent_pps == 1234.5678 * 1.25);
  CHECK(first.runs[1].received_bps == 1300.25 * 512);
  CHECK(first.received_pps.n == 2);
  CHECK(first.received_pps.mean == Approx((1234.5678 + 1300.25) / 2));
  CHECK(first.received_pps.ci_low < first.received_pps.mean);
  const auto& failed = h[0].points[1];
  CHECK(failed.status == "failed");
  REQUIRE(failed.runs.size() == 1);
  CHECK_FALSE(failed.runs[0].ok);
  CHECK_FALSE(failed.runs[0].received_pps.has_value());
  CHECK(failed.runs[0].error == "01-a: netload failed");
  CHECK(failed.received_pps.n == 0);
  SQLite::Statement st(db.sql(), "SELECT kernel_drops, path_loss FROM runs WHERE ok = 1 LIMIT 1");
  REQUIRE(st.executeStep());
  CHECK(st.getColumn(0).getInt64() == 50);
  CHECK(st.getColumn(1).getInt64() == 150);
}

TEST_CASE("harness store: a version 2 file is migrated to the current version, rows, children and the mark kept",
          "[harness][store]") {
  temp_dir t;
  const fs::path file = t.path / "v2.sqlite";
  {
    SQLite::Database old(file.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    old.exec("PRAGMA foreign_keys = ON");
    for (int v : {1, 2})
      for (const char* s : migration_to(v)) old.exec(s);
    old.exec("PRAGMA user_version = 2");
    old.exec(
        "INSERT INTO folders (id, name, path, plan, status, runs_failed, environment, plan_toml, imported_utc)"
        " VALUES (7, 'p-20261201T000000Z', '/r1/p-20261201T000000Z', 'p', 'ok', 0, '{}', '', 0)");
    old.exec("INSERT INTO hosts (folder_id, name) VALUES (7, 'a')");
    old.exec(
        "INSERT INTO runs (folder_id, seq, run, measurement, test, role, kind, topology, message_size, load, route,"
        " search_trial, ok, interrupted, failures, received_pps, summary) VALUES (7, 0, 't-m64-r1', 't-m64', 't',"
        " 'device as server', 'udp', 'pair', 64, '', '', 0, 1, 0, '[]', 1000, '{}')");
    old.exec("INSERT INTO baselines (plan, folder, marked_utc) VALUES ('p', 'p-20261201T000000Z', 0)");
  }
  database db(file);
  CHECK(db.version() == schema_version);
  CHECK(count(db, "folders") == 1);
  CHECK(count(db, "runs") == 1);
  CHECK(count(db, "hosts") == 1);
  CHECK_FALSE(SQLite::Statement(db.sql(), "PRAGMA foreign_key_check").executeStep());
  CHECK(marked_baseline(db, "p") == "/r1/p-20261201T000000Z");
  // The folder's name is no longer unique: the same name elsewhere is a second folder.
  record(db, folder("p-20261201T000000Z", 1, {run("t-m64", 1, 900)}));
  CHECK(count(db, "folders") == 2);
  // Deleting the old folder still deletes its runs: the children follow the rebuilt table.
  db.sql().exec("DELETE FROM folders WHERE id = 7");
  CHECK(count(db, "runs") == 1);
  CHECK(count(db, "hosts") == 1);
}

TEST_CASE("harness store: two folders of one name in two places are two folders", "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");
  auto a = folder("p-20261201T000000Z", 1, {run("t-m64", 1, 1000)});
  auto b = folder("p-20261201T000000Z", 1, {run("t-m64", 1, 900)});
  a.path = "/r1/p-20261201T000000Z";
  b.path = "/r2/p-20261201T000000Z";
  record(db, a);
  record(db, b);
  record(db, b);  // again: it replaces its own record only
  CHECK(count(db, "folders") == 2);
  CHECK(count(db, "runs") == 2);
  const auto h = read_history(db, {});
  REQUIRE(h.size() == 1);
  REQUIRE(h[0].points.size() == 2);
  CHECK(h[0].points[0].path != h[0].points[1].path);
  // By name the folder is ambiguous: said, with both paths; by path each is found.
  CHECK_THROWS_WITH(judge_folder(db, "p-20261201T000000Z", {}), Catch::Contains("/r1/") && Catch::Contains("/r2/"));
  CHECK(judge_folder(db, "/r2/p-20261201T000000Z", {}).measurements.size() == 1);
}

TEST_CASE("harness store: recording a folder again replaces it", "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");
  const auto f = folder("p-20261201T000000Z", 1000, {run("t-m64", 1, 1000), run("t-m64", 2, 1010)});
  record(db, f);
  record(db, f);
  CHECK(count(db, "folders") == 1);
  CHECK(count(db, "runs") == 2);
  CHECK(count(db, "hosts") == 1);
}

TEST_CASE("harness store: folder names, and --since dates", "[harness][store]") {
  CHECK(plan_of_folder("loopback-20261130T012708Z") == "loopback");
  CHECK(plan_of_folder("my-plan-20261130T012708Z-2") == "my-plan");
  CHECK(plan_of_folder("odd") == "odd");
  CHECK(folder_name("/a/b/loopback-20261130T012708Z/") == "loopback-20261130T012708Z");
  CHECK(parse_since("1970-01-02") == 86400);
  CHECK(parse_since("1970-01-01T01:00Z") == 3600);
  CHECK(parse_since("1970-01-01T00:00:10Z") == 10);
  CHECK_THROWS_WITH(parse_since("yesterday"), Catch::Contains("--since yesterday: not a date"));
}

TEST_CASE("harness store: a drop beyond the baseline's interval and the minimum change is a regression",
          "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");
  record(db, folder("p-20261201T000000Z", 1, {run("t-m64", 1, 1000), run("t-m64", 2, 1010)}));
  record(db, folder("p-20261202T000000Z", 2, {run("t-m64", 1, 990), run("t-m64", 2, 1000)}));
  const regression_options o;
  SECTION("the first folder has no baseline") {
    const auto j = judge_folder(db, "p-20261201T000000Z", o);
    CHECK(j.measurements.empty());
    CHECK(j.without_baseline.size() == 1);
  }
  SECTION("30 % lower: a regression") {
    record(db, folder("p-20261203T000000Z", 3, {run("t-m64", 1, 700)}));
    const auto j = judge_folder(db, "p-20261203T000000Z", o);
    REQUIRE(j.measurements.size() == 1);
    CHECK(j.measurements[0].baseline.n == 4);
    CHECK(j.measurements[0].regression);
    CHECK(j.measurements[0].change_percent == Approx(-30).margin(0.5));
    CHECK(j.any_regression());
  }
  SECTION("3 % lower, below the interval but under the minimum change: none") {
    record(db, folder("p-20261203T000000Z", 3, {run("t-m64", 1, 970)}));
    const auto j = judge_folder(db, "p-20261203T000000Z", o);
    REQUIRE(j.measurements.size() == 1);
    CHECK(j.measurements[0].current.mean < j.measurements[0].baseline.ci_low);
    CHECK_FALSE(j.measurements[0].regression);
  }
  SECTION("a marked baseline is judged against instead of the last runs") {
    record(db, folder("p-20261203T000000Z", 3, {run("t-m64", 1, 2000)}));
    record(db, folder("p-20261204T000000Z", 4, {run("t-m64", 1, 1500)}));
    CHECK_FALSE(judge_folder(db, "p-20261204T000000Z", o).any_regression());
    mark_baseline(db, "p-20261203T000000Z");
    const auto j = judge_folder(db, "p-20261204T000000Z", o);
    CHECK(j.any_regression());
    CHECK(j.measurements[0].baseline_folders == std::vector<std::string>{"p-20261203T000000Z"});
  }
  SECTION("a failed run is no point of the baseline and judges nothing") {
    record(db, folder("p-20261203T000000Z", 3, {run("t-m64", 1, 0, false)}));
    CHECK(judge_folder(db, "p-20261203T000000Z", o).measurements.empty());
    record(db, folder("p-20261204T000000Z", 4, {run("t-m64", 1, 700)}));
    CHECK(judge_folder(db, "p-20261204T000000Z", o).measurements[0].baseline.n == 4);
  }
}

TEST_CASE("harness store: a persistent drop stays a regression until a new baseline is marked", "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");
  const double before[] = {1000, 1005, 995, 1002, 998}, after[] = {700, 702, 698, 701, 699};
  for (int i = 0; i < 5; ++i)
    record(db, folder(fmt::format("p-202612{:02d}T000000Z", i + 1), i + 1, {run("t-m64", 1, before[i])}));
  for (int i = 0; i < 5; ++i) {
    const auto name = fmt::format("p-202612{:02d}T000000Z", i + 6);
    record(db, folder(name, i + 6, {run("t-m64", 1, after[i])}));
    const auto j = judge_folder(db, name, {});
    REQUIRE(j.measurements.size() == 1);
    INFO(name << ": " << judgement_text(j));
    CHECK(j.measurements[0].regression);
    // The baseline: the five folders before the drop, none of the flagged ones.
    CHECK(j.measurements[0].baseline_folders.back() == "p-20261201T000000Z");
  }
  // The history page marks the same five.
  const auto tr = trend_of(read_history(db, {})[0], "", {});
  CHECK(std::count_if(tr.points.begin(), tr.points.end(), [](const harness::trend_point& p) { return p.regression; }) ==
        5);
  // The user accepts the new level: judged against it, the next folder is no regression.
  mark_baseline(db, "p-20261208T000000Z");
  record(db, folder("p-20261211T000000Z", 11, {run("t-m64", 1, 700)}));
  CHECK_FALSE(judge_folder(db, "p-20261211T000000Z", {}).any_regression());
}

TEST_CASE("harness store: a failed or interrupted folder cannot be the baseline", "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");
  record(db, folder("p-20261201T000000Z", 1, {run("t-m64", 1, 1000), run("t-m64", 2, 0, false)}));
  auto stopped = folder("p-20261202T000000Z", 2, {run("t-m64", 1, 1000)});
  stopped.interrupted = true;
  stopped.environment["interrupted"] = {{"signal", 2}};
  record(db, stopped);
  CHECK_THROWS_WITH(mark_baseline(db, "p-20261201T000000Z"),
                    Catch::Contains("p-20261201T000000Z") && Catch::Contains("failed"));
  CHECK_THROWS_WITH(mark_baseline(db, "p-20261202T000000Z"), Catch::Contains("interrupted"));
  CHECK(marked_baseline(db, "p").empty());
}

TEST_CASE("harness store: an MLRsearch's goals - NDR and PDR are their relevant lower bounds, MRR what it received",
          "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");
  auto f = folder("p-20261201T000000Z", 1, {});
  nb::search::search_record search;
  auto goal = [&](const char* name, double ratio, double lower, bool regular) {
    nb::search::goal_result r;
    r.g.name = name;
    r.g.loss_ratio = ratio;
    r.relevant_lower_bound = lower;
    r.relevant_upper_bound = lower * 1.004;
    r.conditional_throughput = lower * 0.999;
    r.regular = regular;
    search.goals.push_back(r.g);
    search.goal_results.push_back(r);
  };
  // Two goals at one loss ratio: the first one's row (the table holds one per ratio).
  goal("NDR", 0, 5000, true);
  goal("PDR", 0.005, 6000, false);
  goal("PDR2", 0.005, 6500, true);
  search.mrr = nb::search::unpaced_rates{9000.0, 7000.5};
  f.searches.push_back({{"id", "s-m64"},
                        {"test", "s"},
                        {"role", "device as server"},
                        {"topology", "fan-in"},
                        {"kind", "UDP_STREAM"},
                        {"message_size", 64},
                        {"search", nb::search::to_json(search)}});
  record(db, f);
  const auto h = read_history(db, {});
  REQUIRE(h.size() == 1);
  REQUIRE(h[0].points.size() == 1);
  CHECK(h[0].points[0].ndr_pps == 5000.0);
  CHECK(h[0].points[0].pdr_pps == 6000.0);
  CHECK(h[0].points[0].pdr_loss_target_pct == 0.5);
  CHECK(h[0].points[0].mrr_pps == 7000.5);
}

TEST_CASE("harness store: a rate search's NDR and PDR, and a sweep's loads as series of their own",
          "[harness][store]") {
  // A folder an older harness recorded: rates per loss target in percent.
  temp_dir t;
  database db(t.path / "s.sqlite");
  auto f = folder("p-20261201T000000Z", 1, {});
  const nlohmann::json result0 = {
      {"loss_target_pct", 0.0}, {"rate_pps", 5000.0}, {"rate_bits_per_second", 2.56e6}, {"converged", true}};
  const nlohmann::json result1 = {
      {"loss_target_pct", 0.5}, {"rate_pps", 6000.0}, {"rate_bits_per_second", 3.072e6}, {"converged", true}};
  f.searches.push_back(
      {{"id", "s-m64"},
       {"test", "s"},
       {"role", "device as server"},
       {"topology", "fan-in"},
       {"kind", "UDP_STREAM"},
       {"message_size", 64},
       {"search", {{"mrr", {{"sent_pps", 9000.0}, {"received_pps", 7000.5}}}, {"results", {result0, result1}}}}});
  for (auto [label, pps] : {std::pair{"100m", 900.0}, std::pair{"200m", 1800.0}}) {
    auto r = run(fmt::format("t-m64-{}", label), 1, pps);
    r.run.spec["requested_rate"] = label;
    f.runs.push_back(r);
  }
  record(db, f);
  const auto h = read_history(db, {});
  REQUIRE(h.size() == 3);
  const auto search = std::find_if(h.begin(), h.end(), [](const series& s) { return s.test == "s"; });
  REQUIRE(search != h.end());
  REQUIRE(search->points.size() == 1);
  CHECK(search->points[0].ndr_pps == 5000.0);
  CHECK(search->points[0].pdr_pps == 6000.0);
  CHECK(search->points[0].pdr_loss_target_pct == 0.5);
  CHECK(search->points[0].mrr_pps == 7000.5);
  std::vector<std::string> sweep;
  for (const auto& s : h)
    if (s.test == "t") sweep.push_back(fmt::format("{} {}", s.measurement, *s.points.at(0).runs.at(0).received_pps));
  CHECK(sweep == std::vector<std::string>{"t-m64-100m 900", "t-m64-200m 1800"});
}

TEST_CASE("harness store: a level shift is shown in history, its page and the verdict that follows it",
          "[harness][store]") {
  temp_dir t;
  database db(t.path / "netbench.sqlite");
  // Eight folders at ~1000 pps, then five at ~700: the shift began at the ninth (index 8).
  const double levels[] = {1000, 1012, 995, 1004, 990, 1008, 998, 1003, 702, 695, 710, 698, 704};
  for (int i = 0; i < 13; ++i)
    record(db, folder(fmt::format("p-202612{:02}T000000Z", i + 1), 1000 + i, {run("t-m64", 1, levels[i])}));
  const auto h = read_history(db, {});
  REQUIRE(h.size() == 1);
  REQUIRE(h[0].changes.size() == 1);
  CHECK(h[0].changes[0].begins == 8);
  CHECK(h[0].change_at(8) != nullptr);
  CHECK_THAT(history_text(h), Catch::Contains("began here: -29.9 %"));
  const auto js = history_json(h);
  CHECK(js["series"][0]["points"][7]["level_shift"].is_null());
  CHECK(js["series"][0]["points"][8]["level_shift"]["change_percent"].get<double>() == Approx(-29.9).margin(0.2));
  const std::string csv = history_csv(h);
  CHECK_THAT(csv, Catch::Contains(",level_shift_percent\n") && Catch::Contains("p-20261209T000000Z,ok,1,1,702,,,") &&
                      Catch::Contains(",-29.9"));
  // The verdict of the folder where it was seen names where it began; one before it has none.
  const auto j = judge_folder(db, "p-20261210T000000Z", {});
  REQUIRE(j.measurements.size() == 1);
  REQUIRE(j.measurements[0].shift);
  CHECK(j.measurements[0].shift_begins == "p-20261209T000000Z");
  CHECK_THAT(judgement_text(j),
             Catch::Contains("level shift: -29.9 %") && Catch::Contains("began at p-20261209T000000Z"));
  CHECK_FALSE(judge_folder(db, "p-20261208T000000Z", {}).measurements[0].shift);
  // The trend drawn: every point, the shift marked where it began, the regressions red.
  const auto tr = trend_of(h[0], "", {});
  REQUIRE(tr.points.size() == 13);
  CHECK(tr.points[8].change_begins);
  CHECK(tr.points[8].regression);
  CHECK_FALSE(tr.points[7].regression);
  const auto drawn = harness::trend_chart(tr, true, "t2");
  REQUIRE(drawn);
  CHECK_THAT(drawn->svg, Catch::Contains("shift -30 %"));
  // report.html's: the last N up to the run, the run marked.
  const auto last = trend_of(h[0], "", {}, "/nowhere/p-20261210T000000Z", 4);
  REQUIRE(last.points.size() == 4);
  CHECK(last.points.back().current);
  CHECK(last.points.front().folder == "p-20261207T000000Z");
}

TEST_CASE("harness store: report.html's history of a run, and the history page", "[harness][store]") {
  temp_dir t;
  database db(t.path / "netbench.sqlite");
  record(db, folder("p-20261201T000000Z", 1764547200, {run("t-m64", 1, 1000)}));
  auto first = history_of_run(db, "p-20261201T000000Z", {});
  CHECK(first.recorded);
  CHECK(first.trends.empty());
  CHECK_THAT(first.note, Catch::Contains("First run of t-m64 in the results database"));
  // A single folder is drawn too (its time axis a few seconds wide around it, to the second).
  const auto one = harness::trend_chart(trend_of(read_history(db, {})[0], "", {}), true, "t1");
  REQUIRE(one);
  CHECK(one->error.empty());
  CHECK_THAT(one->svg, Catch::Contains("<svg"));
  record(db, folder("p-20261202T000000Z", 1764633600, {run("t-m64", 1, 990), run("t-m64", 2, 1010)}));
  const auto second = history_of_run(db, "p-20261202T000000Z", {});
  REQUIRE(second.trends.size() == 1);
  CHECK(second.trends[0].points.size() == 2);
  CHECK(second.trends[0].points[1].received_pps.has_interval());
  const std::string page = history_page(db, read_history(db, {}), {}, {});
  CHECK_THAT(page,
             Catch::Contains("<h2>Plan p</h2>") && Catch::Contains("data-chart=\"history-p-t-m64-device_as_server\""));
  CHECK_THAT(page, !Catch::Contains("Chart not drawn"));
}
