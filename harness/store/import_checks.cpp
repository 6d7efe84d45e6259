#include "harness/store/import_checks.hpp"

#include "core/base/text.hpp"
#include "harness/store/history.hpp"

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace harness::store {

void check_numbers(const values& row, const std::string& where) {
  for (const auto& [column, v] : row) {
    const bool time = column == "started_utc" || column == "t0";
    if (const auto* n = std::get_if<std::int64_t>(&v); n && *n < 0)
      throw std::runtime_error(
          fmt::format("{}: {} {} is out of range (more than 2^63 - 1)", where, column, static_cast<std::uint64_t>(*n)));
    const auto* x = std::get_if<double>(&v);
    if (!x) continue;
    if (!std::isfinite(*x) || std::fabs(*x) > max_figure || (time && (*x < 0 || *x > latest_utc_s)))
      throw std::runtime_error(fmt::format("{}: {} {} is out of range ({})", where, column, *x,
                                           time ? fmt::format("0 to {:.0f}, 9999-12-31", latest_utc_s)
                                                : fmt::format("a finite number within +-{:g}", max_figure)));
  }
}

double started_of(const json& env, const fs::path& file) {
  const json t = env.value("started_utc", json());
  if (t.is_null()) return 0;
  double s = std::numeric_limits<double>::quiet_NaN();
  if (t.is_number()) s = t.get<double>();
  else if (t.is_string()) {
    const std::string text = t.get<std::string>();
    char* end = nullptr;
    s = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') s = std::numeric_limits<double>::quiet_NaN();
  }
  if (!(s >= 0 && s <= latest_utc_s))
    throw std::runtime_error(fmt::format("{}: started_utc {} is not a time from 1970 to 9999", file.string(),
                                         nb::printable_bounded(t.dump(), 64)));
  return s;
}

std::int64_t message_size_of(const json& s, const std::string& id) {
  constexpr std::int64_t most = std::numeric_limits<std::uint32_t>::max();  // as a run's (run_from_json)
  const json& m = s.at("message_size");
  const bool whole = m.is_number_unsigned()  ? m.get<std::uint64_t>() <= static_cast<std::uint64_t>(most)
                     : m.is_number_integer() ? m.get<std::int64_t>() >= 0 && m.get<std::int64_t>() <= most
                                             : false;
  if (!whole) throw std::runtime_error(fmt::format("search {}: message_size {} is out of range", id, m.dump()));
  return m.get<std::int64_t>();
}

nb::search::search_record read_search_of(const json& s, const std::string& id) {
  const auto it = s.find("search");
  if (it == s.end()) throw std::runtime_error(fmt::format("search {}: field 'search' is missing", id));
  try {
    return nb::search::read_search_record(*it);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("search {}: {}", id, e.what()));
  }
}

row_counts rows_of_others(SQLite::Database& db, const std::string& path) {
  static const std::pair<const char*, const char*> tables[] = {
      {"folders", "SELECT count(*) FROM folders WHERE path <> ?1"},
      {"runs", "SELECT count(*) FROM runs WHERE folder_id NOT IN (SELECT id FROM folders WHERE path = ?1)"},
      {"instances",
       "SELECT count(*) FROM instances WHERE run_id NOT IN"
       " (SELECT r.id FROM runs r JOIN folders f ON f.id = r.folder_id WHERE f.path = ?1)"},
      {"hosts", "SELECT count(*) FROM hosts WHERE folder_id NOT IN (SELECT id FROM folders WHERE path = ?1)"},
      {"searches", "SELECT count(*) FROM searches WHERE folder_id NOT IN (SELECT id FROM folders WHERE path = ?1)"},
      {"baselines", "SELECT count(*) FROM baselines"}};
  row_counts out;
  for (const auto& [table, sql] : tables) {
    SQLite::Statement st(db, sql);
    if (std::string_view(sql).find("?1") != std::string_view::npos) st.bind(1, path);
    st.executeStep();
    out[table] = st.getColumn(0).getInt64();
  }
  return out;
}

std::string rows_changed(const row_counts& before, const row_counts& after) {
  std::vector<std::string> out;
  for (const auto& [table, n] : before)
    if (after.at(table) != n) out.push_back(fmt::format("{}: {} before, {} after", table, n, after.at(table)));
  return fmt::format("{}", fmt::join(out, "; "));
}

}  // namespace harness::store
