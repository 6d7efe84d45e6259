#pragma once
// An import's checks: numbers in range, a search record read field by field, no other folder's rows changed.
#include "core/search/search_record.hpp"
#include "harness/store/sql.hpp"

#include <SQLiteCpp/Database.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace harness::store {

// Beyond 1e18 (an Ebit/s, 31 000 years in µs) a figure is no measurement's.
inline constexpr double max_figure = 1e18;

// Throws "WHERE: COLUMN VALUE is out of range (...)"; a count below zero wrapped on its way here.
void check_numbers(const values& row, const std::string& where);

// "1764750588.123" or a number (none: 0); throws on a time no date shows.
double started_of(const nlohmann::json& env, const std::filesystem::path& file);

// A whole number within a run's uint32, never a float cast.
std::int64_t message_size_of(const nlohmann::json& search, const std::string& id);

// A search's "search" block, read as every version wrote it: a bad field refuses the folder, naming it.
nb::search::search_record read_search_of(const nlohmann::json& search, const std::string& id);

// Per table, the rows of other folders.
using row_counts = std::map<std::string, std::int64_t>;
row_counts rows_of_others(SQLite::Database& db, const std::string& path);
// "runs: 4 before, 0 after; ...", empty when no count changed.
std::string rows_changed(const row_counts& before, const row_counts& after);

}  // namespace harness::store
