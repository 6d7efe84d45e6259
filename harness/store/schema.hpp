#pragma once
// The store's schema, as the steps that take a file from one version to the next (PRAGMA user_version):
// a new file runs them all, an older one the steps it lacks, each version in the transaction that sets it.
#include <SQLiteCpp/Database.h>

#include <string>
#include <vector>

namespace harness::store {

// The statements that take version `to - 1` to version `to` (1 = the tables from nothing). Their text is
// what a file's schema is compared with (schema_difference): a released step is never edited, not even
// its blanks.
const std::vector<const char*>& migration_to(int to);

// How the schema of `db` (its tables, indexes, views and triggers, with their SQL) differs from the one
// these steps make at `version`: "view 'folders' (not the store's)", "trigger 'x' (not the store's)",
// "table 'runs' (another definition)", "no index 'runs_by_test'", the first few; empty when it is the
// store's own. A file from elsewhere may carry a view or a trigger that runs whenever the store reads
// or writes: only the store's own objects are trusted.
std::string schema_difference(SQLite::Database& db, int version);

}  // namespace harness::store
