#include "harness/store/sql.hpp"

#include <fmt/format.h>

namespace harness::store {

void bind(SQLite::Statement& st, int index, const value& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) st.bind(index);
        else st.bind(index, x);
      },
      v);
}

std::int64_t insert(SQLite::Database& db, const std::string& table, const values& row) {
  std::string columns, marks;
  for (const auto& [name, v] : row) {
    columns += fmt::format("{}{}", columns.empty() ? "" : ", ", name);
    marks += marks.empty() ? "?" : ", ?";
  }
  SQLite::Statement st(db, fmt::format("INSERT INTO {} ({}) VALUES ({})", table, columns, marks));
  int index = 1;
  for (const auto& [name, v] : row) bind(st, index++, v);
  st.exec();
  return db.getLastInsertRowid();
}

std::optional<double> column_double(SQLite::Statement& st, int index) {
  const auto c = st.getColumn(index);
  if (c.isNull()) return std::nullopt;
  return c.getDouble();
}

}  // namespace harness::store
