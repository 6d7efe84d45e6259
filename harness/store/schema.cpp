#include "harness/store/schema.hpp"

#include "core/base/text.hpp"
#include "harness/store/database.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <utility>

namespace harness::store {

namespace {

// A failed run's figures are NULL, never 0.
const std::vector<const char*> v1 = {
    R"(CREATE TABLE folders (
         id INTEGER PRIMARY KEY,
         name TEXT NOT NULL UNIQUE,        -- the results folder's name: <plan>-<UTC time>[-n]
         path TEXT NOT NULL,
         plan TEXT NOT NULL,
         started_utc REAL,                 -- seconds since the epoch (environment.json)
         harness_version TEXT,
         status TEXT NOT NULL,             -- ok | failed | interrupted
         error TEXT,                       -- the first problem of a failed or interrupted folder
         runs_failed INTEGER NOT NULL,
         environment TEXT NOT NULL,        -- environment.json
         plan_toml TEXT NOT NULL,
         imported_utc REAL NOT NULL))",
    R"(CREATE TABLE hosts (
         folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
         name TEXT NOT NULL, address TEXT, launcher TEXT, kernel TEXT, check_json TEXT,
         PRIMARY KEY (folder_id, name)))",
    R"(CREATE TABLE runs (
         id INTEGER PRIMARY KEY,
         folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
         seq INTEGER NOT NULL,             -- order in the folder's summary.json
         run TEXT NOT NULL, measurement TEXT NOT NULL, test TEXT NOT NULL, role TEXT NOT NULL,
         kind TEXT NOT NULL, topology TEXT NOT NULL, message_size INTEGER NOT NULL,
         load TEXT NOT NULL, route TEXT NOT NULL, search_trial INTEGER NOT NULL,
         ok INTEGER NOT NULL, interrupted INTEGER NOT NULL, error TEXT, failures TEXT NOT NULL, t0 REAL,
         sent_packets INTEGER, sent_pps REAL, sent_bps REAL,
         received_packets INTEGER, received_pps REAL, received_bps REAL,
         lost INTEGER, path_loss INTEGER, kernel_drops INTEGER, loss_percent REAL,
         steady_sent_pps REAL, steady_received_pps REAL, steady_received_bps REAL,
         start_skew_ms REAL, limit_kind TEXT, limit_text TEXT,
         latency_p50_us REAL, latency_p90_us REAL, latency_p99_us REAL, latency_p999_us REAL, latency_max_us REAL,
         summary TEXT NOT NULL,            -- the run's summary.json entry
         UNIQUE (folder_id, seq)))",
    R"(CREATE TABLE instances (
         run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
         name TEXT NOT NULL, client TEXT, server TEXT, category TEXT,
         ok INTEGER NOT NULL, problems TEXT NOT NULL,
         sent_packets INTEGER, sent_pps REAL, sent_bps REAL,
         received_packets INTEGER, received_pps REAL, received_bps REAL,
         lost INTEGER, path_loss INTEGER, kernel_drops INTEGER, loss_percent REAL,
         verdict_limit TEXT, verdict_text TEXT, start_offset_ms REAL,
         PRIMARY KEY (run_id, name)))",
    R"(CREATE TABLE searches (
         folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
         run TEXT NOT NULL, test TEXT NOT NULL, role TEXT NOT NULL, message_size INTEGER NOT NULL,
         loss_target_pct REAL NOT NULL, rate_pps REAL, rate_bps REAL, converged INTEGER NOT NULL,
         mrr_received_pps REAL,
         PRIMARY KEY (folder_id, run, loss_target_pct)))",  "CREATE INDEX runs_by_test ON runs (test, role, message_size)",
};

// A plan's marked baseline (`harness db baseline`).
const std::vector<const char*> v2 = {
    R"(CREATE TABLE baselines (
         plan TEXT PRIMARY KEY,
         folder TEXT NOT NULL,             -- by name (version 3: by path): a re-import keeps the mark
         marked_utc REAL NOT NULL))",
};

// A folder is its path (two results roots may share names); ids kept, foreign keys off: rows keep their folder.
const std::vector<const char*> v3 = {
    R"(CREATE TABLE folders_v3 (
         id INTEGER PRIMARY KEY,
         name TEXT NOT NULL,               -- the results folder's name: <plan>-<UTC time>[-n]
         path TEXT NOT NULL UNIQUE,        -- its absolute path: what identifies it
         plan TEXT NOT NULL,
         started_utc REAL,
         harness_version TEXT,
         status TEXT NOT NULL,
         error TEXT,
         runs_failed INTEGER NOT NULL,
         environment TEXT NOT NULL,
         plan_toml TEXT NOT NULL,
         imported_utc REAL NOT NULL))",
    "INSERT INTO folders_v3 SELECT id, name, path, plan, started_utc, harness_version, status, error, runs_failed,"
    " environment, plan_toml, imported_utc FROM folders",
    "DROP TABLE folders",
    "ALTER TABLE folders_v3 RENAME TO folders",
    "CREATE INDEX folders_by_name ON folders (name)",
    "CREATE INDEX folders_by_plan ON folders (plan, started_utc)",
    "UPDATE baselines SET folder = COALESCE((SELECT path FROM folders f WHERE f.name = baselines.folder), folder)",
};

// Which instances started late, by how much (NULL: none).
const std::vector<const char*> v4 = {
    "ALTER TABLE runs ADD COLUMN skew TEXT",
};

// (type, name) -> SQL; ANALYZE's tables left out.
using schema_objects = std::map<std::pair<std::string, std::string>, std::string>;

schema_objects objects_of(SQLite::Database& db) {
  SQLite::Statement st(db,
                       "SELECT type, name, COALESCE(sql, '') FROM sqlite_master"
                       " WHERE NOT (type = 'table' AND name IN ('sqlite_stat1', 'sqlite_stat4'))");
  schema_objects out;
  while (st.executeStep())
    out[{st.getColumn(0).getString(), st.getColumn(1).getString()}] = st.getColumn(2).getString();
  return out;
}

schema_objects objects_at(int version) {
  SQLite::Database mem(":memory:", SQLite::OPEN_READWRITE);
  for (int v = 1; v <= version; ++v)
    for (const char* statement : migration_to(v)) mem.exec(statement);
  return objects_of(mem);
}

// Triggers and views first: they run on their own.
int rank(const std::string& type) { return type == "trigger" ? 0 : type == "view" ? 1 : 2; }

}  // namespace

std::string schema_difference(SQLite::Database& db, int version) {
  if (version < 0 || version > schema_version)
    return fmt::format("schema version {} is not one of the store's", version);
  const schema_objects want = objects_at(version), have = objects_of(db);
  std::vector<std::pair<int, std::string>> found;
  for (const auto& [key, sql] : have) {
    const auto it = want.find(key);
    if (it == want.end() || it->second != sql)
      found.emplace_back(rank(key.first), fmt::format("{} '{}' ({})", key.first, nb::printable_bounded(key.second, 64),
                                                      it == want.end() ? "not the store's" : "another definition"));
  }
  for (const auto& [key, sql] : want)
    if (!have.count(key)) found.emplace_back(3, fmt::format("no {} '{}'", key.first, key.second));
  if (found.empty()) return {};
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> said;
  for (std::size_t i = 0; i < found.size() && i < 4; ++i) said.push_back(found[i].second);
  if (found.size() > said.size()) said.push_back(fmt::format("{} more", found.size() - said.size()));
  return fmt::format("{}", fmt::join(said, ", "));
}

const std::vector<const char*>& migration_to(int to) {
  static const std::vector<const std::vector<const char*>*> steps = {&v1, &v2, &v3, &v4};
  if (to < 1 || to > static_cast<int>(steps.size()))
    throw store_error(fmt::format("no schema migration to version {}", to));
  return *steps[static_cast<std::size_t>(to - 1)];
}

}  // namespace harness::store
