// Files and databases from elsewhere (issue 40, finding 7): a results file is read beneath its folder, a
// regular file of bounded size; a database whose schema is not the store's own is refused before it is
// read; a folder with a number out of range is refused whole, the store left as it was; an import that
// would change another folder's rows writes nothing; names reach the terminal table escaped.
#include "core/sys/file_beneath.hpp"
#include "harness/store/database.hpp"
#include "harness/store/history.hpp"
#include "harness/store/record.hpp"
#include "harness/store/schema.hpp"
#include "tests/support/temp_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>

namespace fs = std::filesystem;
using namespace harness::store;
using nb::test::temp_dir;

namespace {

std::string refusal(const fs::path& folder, const fs::path& relative, std::size_t most = 1 << 20) {
  try {
    nb::read_file_beneath(folder, relative, most);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(read)";
}

folder_content one_run_folder(const std::string& name, double started, const std::string& test = "t") {
  folder_content f;
  f.path = "/nowhere/" + name;
  f.name = name;
  f.plan = plan_of_folder(name);
  f.started_utc = started;
  f.environment = {{"harness_version", "test"}};
  harness::run_summary s;
  s.run.test = test;
  s.run.role = "device as server";
  s.run.message_size = 64;
  s.run.id = test + "-m64-r1";
  s.run.spec = {{"id", s.run.id}, {"repeat", 1}, {"requested_pps", nullptr}, {"requested_rate", nullptr}};
  s.ok = true;
  s.sender = {1000, 64000, 1000, 512000};
  s.receiver = {1000, 64000, 1000, 512000};
  f.runs.push_back(s);
  return f;
}

std::int64_t folders(database& db) { return db.sql().execAndGet("SELECT count(*) FROM folders").getInt64(); }

// A store holding one folder, with `extra` added to its schema behind the store's back.
fs::path store_with(const fs::path& dir, const char* extra) {
  const fs::path file = dir / "hostile.sqlite";
  {
    database db(file);
    record(db, one_run_folder("p-20261201T000000Z", 1000));
  }
  SQLite::Database(file.string(), SQLite::OPEN_READWRITE).exec(extra);
  return file;
}

}  // namespace

TEST_CASE("results files: read beneath their folder, regular files only, at most the cap", "[harness][store]") {
  temp_dir t;
  std::ofstream(t.path / "run.json") << R"({"order": 0})";
  CHECK(nb::read_file_beneath(t.path, "run.json", 100) == R"({"order": 0})");
  CHECK_FALSE(nb::read_file_beneath(t.path, "missing.json", 100).has_value());
  fs::create_directory(t.path / "raw");
  fs::create_symlink("../run.json", t.path / "raw" / "inside.json");  // a symlink that stays in the folder
  CHECK(nb::read_file_beneath(t.path, "raw/inside.json", 100).has_value());
  fs::create_symlink("/dev/zero", t.path / "plan.toml");
  fs::create_symlink("/etc/hostname", t.path / "environment.json");
  CHECK_THAT(refusal(t.path, "plan.toml"), Catch::Contains("plan.toml: leads out of " + t.path.string()));
  CHECK_THAT(refusal(t.path, "environment.json"), Catch::Contains("leads out of"));
  CHECK_THAT(refusal(t.path, "raw/../../x.json"), Catch::Contains("leads out of"));
  REQUIRE(::mkfifo((t.path / "fifo.json").c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THAT(refusal(t.path, "fifo.json"), Catch::Contains("fifo.json: a FIFO, not a regular file"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  std::ofstream(t.path / "big.json") << std::string(2000, ' ');
  CHECK_THAT(refusal(t.path, "big.json", 1024), Catch::Contains("2000 bytes, more than 1 KiB"));
  CHECK_THAT(refusal(t.path, "raw", 1024), Catch::Contains("a folder, not a regular file"));
}

TEST_CASE("harness store: a database with a trigger or a view of its own is refused when opened, naming it",
          "[harness][store]") {
  temp_dir t;
  SECTION("a trigger that deletes the folders already stored") {
    const auto file = store_with(t.path, "CREATE TRIGGER wipe AFTER INSERT ON folders BEGIN DELETE FROM folders;END");
    CHECK_THROWS_WITH(database(file), Catch::Contains("is not the store's own") &&
                                          Catch::Contains("trigger 'wipe' (not the store's)") &&
                                          Catch::Contains("harness db import"));
  }
  SECTION("a recursive view in the place of the folders table") {
    const auto file = store_with(t.path,
                                 "ALTER TABLE folders RENAME TO f0; CREATE VIEW folders AS WITH RECURSIVE c(n) AS "
                                 "(SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT f0.* FROM f0, c");
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(database(file), Catch::Contains("view 'folders' (not the store's)"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  }
  SECTION("an index of its own") {
    CHECK_THROWS_WITH(database(store_with(t.path, "CREATE INDEX mine ON runs (received_pps)")),
                      Catch::Contains("index 'mine' (not the store's)"));
  }
  SECTION("a file at version 0 that already holds tables") {
    const fs::path file = t.path / "other.sqlite";
    SQLite::Database(file.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE).exec("CREATE TABLE t (x)");
    CHECK_THROWS_WITH(database(file), Catch::Contains("schema version 0") && Catch::Contains("table 't'"));
  }
  SECTION("ANALYZE's statistics are SQLite's, not a change") {
    const auto file = store_with(t.path, "ANALYZE");
    database db(file);
    CHECK(folders(db) == 1);
  }
}

TEST_CASE("harness store: an import that would change another folder's rows writes nothing", "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");  // checked when opened: a trigger added afterwards, as another writer could
  record(db, one_run_folder("p-20261201T000000Z", 1000));
  db.sql().exec("CREATE TRIGGER wipe AFTER INSERT ON folders BEGIN DELETE FROM folders WHERE id <> NEW.id; END");
  CHECK_THROWS_WITH(record(db, one_run_folder("p-20261202T000000Z", 2000)),
                    Catch::Contains("changed rows of other folders (folders: 1 before, 0 after; runs: 1 before, 0 "
                                    "after)"));
  REQUIRE(folders(db) == 1);
  CHECK(db.sql().execAndGet("SELECT name FROM folders").getString() == "p-20261201T000000Z");
}

TEST_CASE("harness store: a number out of range refuses its folder, the others still read", "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");
  record(db, one_run_folder("p-20261201T000000Z", 1000));
  CHECK_THROWS_WITH(record(db, one_run_folder("p-20261202T000000Z", 1e300)),
                    Catch::Contains("started_utc 1e+300 is out of range (0 to 253402300799, 9999-12-31)"));
  auto inf = one_run_folder("p-20261203T000000Z", 3000);
  inf.runs[0].receiver.pps = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(record(db, inf), Catch::Contains("run t-m64-r1: received_pps inf is out of range"));
  auto wrapped = one_run_folder("p-20261204T000000Z", 4000);
  wrapped.runs[0].sender.packets = std::numeric_limits<std::uint64_t>::max();
  CHECK_THROWS_WITH(record(db, wrapped),
                    Catch::Contains("run t-m64-r1: sent_packets 18446744073709551615 is out of range"));
  CHECK(folders(db) == 1);
  // A store written before the check holds such a time: the history still reads, the date shown as none.
  db.sql().exec("UPDATE folders SET started_utc = 1e300");
  const auto h = read_history(db, {});
  REQUIRE(h.size() == 1);
  CHECK_THAT(history_text(h), Catch::Contains("\n-  ") && Catch::Contains(" p-20261201T000000Z "));
  CHECK(history_json(h)["series"][0]["points"][0]["date_utc"] == "-");
  CHECK(utc_text(-1) == "-");
  CHECK(utc_text(std::numeric_limits<double>::quiet_NaN()) == "-");
}

TEST_CASE("harness store: names reach the history table escaped, and stay data in JSON and CSV", "[harness][store]") {
  temp_dir t;
  database db(t.path / "s.sqlite");
  record(db, one_run_folder("p\x1b]0;owned\x07-20261201T000000Z", 1000, "t\x1b[2J\x07"));
  const auto h = read_history(db, {});
  const std::string text = history_text(h);
  const auto raw = std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f;
  });
  fmt::print("history table: {} raw control byte(s); names shown as {}\n", raw, text.substr(0, text.find(':')));
  CHECK(raw == 0);
  CHECK_THAT(text, Catch::Contains(R"(p\x1b]0;owned\x07-20261201T000000Z)") && Catch::Contains(R"(test t\x1b[2J\x07)"));
  CHECK(history_json(h)["series"][0]["test"] == "t\x1b[2J\x07");
  CHECK_THAT(history_csv(h), Catch::Contains("t\x1b[2J\x07"));
}
