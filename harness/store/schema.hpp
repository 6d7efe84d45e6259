#pragma once
// The store's schema as migration steps (PRAGMA user_version).
#include <SQLiteCpp/Database.h>

#include <string>
#include <vector>

namespace harness::store {

// Version `to - 1` to `to` (1: from nothing). Never edit a released step: schemas are compared by text.
const std::vector<const char*>& migration_to(int to);

// db's schema against the steps' at `version`: the first few differences, empty for the store's own.
std::string schema_difference(SQLite::Database& db, int version);

}  // namespace harness::store
