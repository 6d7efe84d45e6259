#include "harness/store/database.hpp"

#include "harness/store/schema.hpp"

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <sqlite3.h>

namespace fs = std::filesystem;

namespace harness::store {

namespace {

// Outlasts another harness's transaction and a checkpoint: no "database is locked".
constexpr int busy_timeout_ms = 30000;

std::string open_path(const fs::path& path) {
  if (path.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      throw store_error(fmt::format("results database {}: cannot make its folder: {}", path.string(), ec.message()));
  }
  return path.string();
}

SQLite::Database open(const fs::path& path) {
  try {
    return SQLite::Database(open_path(path), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, busy_timeout_ms);
  } catch (const SQLite::Exception& e) {
    throw store_error(fmt::format("results database {}: cannot open it: {}", path.string(), e.what()));
  }
}

}  // namespace

std::string repair_hint(const fs::path& path) {
  return fmt::format("move it aside and rebuild it from the results folders with `harness db import --db {} DIR...`",
                     path.string());
}

store_error database::translate(const SQLite::Exception& e) const {
  const int code = e.getErrorCode();
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
    return store_error(
        fmt::format("results database {} is damaged ({}): {}", path_.string(), e.what(), repair_hint(path_)));
  return store_error(fmt::format("results database {}: {}", path_.string(), e.what()));
}

database::database(const fs::path& path) : path_(path), db_(open(path)) {
  guarded([&] {
    // A file from elsewhere: only harmless functions in its schema, damaged pages found before use.
    db_.exec("PRAGMA trusted_schema = OFF");
    db_.exec("PRAGMA cell_size_check = ON");
    check_schema();
    // WAL: readers never block the writer; a writer that dies leaves the file whole.
    db_.exec("PRAGMA journal_mode = WAL");
    db_.exec("PRAGMA synchronous = NORMAL");
    db_.exec("PRAGMA foreign_keys = ON");
    migrate();
  });
}

void database::check_schema() {
  SQLite::Transaction t(db_);  // one snapshot for the version and the schema
  const int v = db_.execAndGet("PRAGMA user_version").getInt();
  if (v > schema_version) return;  // refused by migrate()
  if (const std::string found = schema_difference(db_, v); !found.empty())
    throw store_error(
        fmt::format("results database {} is not the store's own (schema version {}): it holds {}: "
                    "refused before any of its tables was read; {}",
                    path_.string(), v, found, repair_hint(path_)));
  t.commit();
}

int database::version() {
  return guarded([&] { return db_.execAndGet("PRAGMA user_version").getInt(); });
}

void database::migrate() {
  if (db_.execAndGet("PRAGMA user_version").getInt() == schema_version) return;
  // Off: dropping a rebuilt table would delete its referrers. Not settable inside a transaction.
  db_.exec("PRAGMA foreign_keys = OFF");
  try {
    migrate_steps();
  } catch (...) {
    db_.exec("PRAGMA foreign_keys = ON");
    throw;
  }
  db_.exec("PRAGMA foreign_keys = ON");
}

void database::migrate_steps() {
  // IMMEDIATE: of two harnesses creating one file, the second waits and sees the first's version.
  SQLite::Transaction t(db_, SQLite::TransactionBehavior::IMMEDIATE);
  int v = db_.execAndGet("PRAGMA user_version").getInt();
  if (v > schema_version)
    throw store_error(
        fmt::format("results database {} has schema version {}, newer than this harness's {}: use a newer "
                    "harness, or another file (`harness db import` makes one from the results folders)",
                    path_.string(), v, schema_version));
  for (; v < schema_version; ++v) {
    for (const char* statement : migration_to(v + 1)) db_.exec(statement);
    db_.exec(fmt::format("PRAGMA user_version = {}", v + 1));
  }
  if (SQLite::Statement check(db_, "PRAGMA foreign_key_check"); check.executeStep())
    throw store_error(fmt::format("results database {}: the schema migration left a dangling row in {}: {}",
                                  path_.string(), check.getColumn(0).getString(), repair_hint(path_)));
  t.commit();
}

}  // namespace harness::store
