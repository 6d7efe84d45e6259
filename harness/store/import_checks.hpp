#pragma once
// What an import checks in a results folder that may come from elsewhere, and in the store it writes:
// every number in range before it is stored (a bad folder is refused whole, naming the number), a
// search's record read field by field, and no other folder's rows changed by the import.
#include "core/search/search_record.hpp"
#include "harness/store/sql.hpp"

#include <SQLiteCpp/Database.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace harness::store {

// The largest figure stored (1e18: an Ebit/s, or 31 000 years in microseconds): beyond it a file is not a
// measurement's.
inline constexpr double max_figure = 1e18;

// Every number of a row, before it is stored: a figure finite and within max_figure; a time (started_utc,
// t0) one that a date can show, 0 to latest_utc_s; a count within the 64-bit integers the store holds (a
// larger one wrapped below zero on its way here). Throws std::runtime_error "WHERE: COLUMN VALUE is out of
// range (...)".
void check_numbers(const values& row, const std::string& where);

// environment.json's started_utc (`file` names it in errors), written as a string with milliseconds
// ("1764750588.123"); a number is taken too, none is 0. Anything else, or a time no date can show (1e300,
// which ended every history), is not a harness's: std::runtime_error.
double started_of(const nlohmann::json& env, const std::filesystem::path& file);

// A search record's message size: a whole number of bytes within a run's (uint32), never a float cast.
std::int64_t message_size_of(const nlohmann::json& search, const std::string& id);

// A search record's "search" block (`search` is the record, raw/<run>/search.json), read as every version
// wrote it (core/search/search_record.hpp): a field missing or of the wrong type refuses the folder,
// naming the search and the field.
nb::search::search_record read_search_of(const nlohmann::json& search, const std::string& id);

// Per table, the rows that belong to folders other than the one at `path`.
using row_counts = std::map<std::string, std::int64_t>;
row_counts rows_of_others(SQLite::Database& db, const std::string& path);
// "runs: 4 before, 0 after" for each table whose count changed, joined by "; "; empty when none did.
std::string rows_changed(const row_counts& before, const row_counts& after);

}  // namespace harness::store
