#pragma once
// The store's schema, as the steps that take a file from one version to the next (PRAGMA user_version):
// a new file runs them all, an older one the steps it lacks, each version in the transaction that sets it.
#include <vector>

namespace harness::store {

// The statements that take version `to - 1` to version `to` (1 = the tables from nothing).
const std::vector<const char*>& migration_to(int to);

}  // namespace harness::store
