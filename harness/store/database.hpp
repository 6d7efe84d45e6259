#pragma once
// The results store: one SQLite file (WAL, a busy timeout, one transaction per results folder) that
// several harnesses may write at once. The results folders stay the source of truth: the store is an
// index of their figures, rebuilt from them by `harness db import`.
#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace harness::store {

// The store cannot be opened or written: the message names the file, and for a damaged one how to
// rebuild it from the results folders.
struct store_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The schema version this harness writes (PRAGMA user_version).
constexpr int schema_version = 4;

class database {
 public:
  // Opens (creating it and its folder when missing) and migrates to schema_version. A file that is not
  // a database, or is damaged, is a store_error naming it and `harness db import` as the repair; a file
  // from a newer harness is refused rather than written with an older schema; so is a file whose schema
  // is not exactly the store's at its version (a view, a trigger, a changed table), before anything in
  // it runs. trusted_schema is off and cell_size_check on for whatever reads it.
  explicit database(const std::filesystem::path& path);
  SQLite::Database& sql() { return db_; }
  const std::filesystem::path& path() const { return path_; }
  int version();
  // Runs `fn` (any SQLite error inside it) and turns a damaged file into the repair message.
  template <typename Fn>
  auto guarded(Fn&& fn) -> decltype(fn()) {
    try {
      return fn();
    } catch (const SQLite::Exception& e) {
      throw translate(e);
    }
  }
  store_error translate(const SQLite::Exception& e) const;

 private:
  void check_schema();
  void migrate();
  void migrate_steps();
  std::filesystem::path path_;
  SQLite::Database db_;
};

// The repair hint that every corrupt-store message carries.
std::string repair_hint(const std::filesystem::path& path);

}  // namespace harness::store
