#pragma once
// Rows as (column, value) lists: no value bound to the wrong column by position.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace harness::store {

using value = std::variant<std::nullptr_t, std::int64_t, double, std::string>;
using values = std::vector<std::pair<std::string, value>>;

inline void append(values& to, values more) {
  for (auto& v : more) to.push_back(std::move(v));
}

inline value optional(const std::optional<double>& x) { return x ? value(*x) : value(nullptr); }

void bind(SQLite::Statement& st, int index, const value& v);
// The new row's rowid.
std::int64_t insert(SQLite::Database& db, const std::string& table, const values& row);
std::optional<double> column_double(SQLite::Statement& st, int index);

}  // namespace harness::store
