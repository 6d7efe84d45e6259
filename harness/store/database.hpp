#pragma once
// The results store: one SQLite file several harnesses may write at once, an index of the results
// folders (`harness db import` rebuilds it).
#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace harness::store {

// Names the file, and for a damaged one the repair.
struct store_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int schema_version = 4;

class database {
 public:
  // Creates and migrates; a damaged or newer file, or a foreign schema, is refused before anything in it runs.
  explicit database(const std::filesystem::path& path);
  SQLite::Database& sql() { return db_; }
  const std::filesystem::path& path() const { return path_; }
  int version();
  // fn, a damaged file's error turned into the repair message.
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

std::string repair_hint(const std::filesystem::path& path);

}  // namespace harness::store
