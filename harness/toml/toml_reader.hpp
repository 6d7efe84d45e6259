#pragma once
// Strict, typed reading of one TOML table: each key once with its type, done() rejects keys nobody read,
// errors at file:line:col of the node. Knows neither plans nor labs (plan's part: plan/plan_toml.hpp).
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// A key one or two edits from a known one is its typo ("did you mean").
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

inline bool is_typo_of(std::string_view typed, std::string_view known) {
  const std::size_t d = edit_distance(typed, known);
  return d > 0 && d <= std::max<std::size_t>(1, std::min<std::size_t>(2, known.size() / 3));
}

inline std::string where(const toml::source_region& r) {
  const std::string path = r.path ? *r.path : std::string("<plan>");
  return fmt::format("{}:{}:{}", path, r.begin.line, r.begin.column);
}

inline const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date/time";
  }
}

// Error is plan_error or lab::lab_error.
template <class Error>
class basic_toml_reader {
 public:
  basic_toml_reader(const toml::table& t, std::string context) : t_(t), context_(std::move(context)) {}

  const toml::node* find(const char* key) {
    seen_.insert(key);
    return t_.get(key);
  }
  const toml::node& need(const char* key) {
    const toml::node* n = find(key);
    if (n) return *n;
    // A misspelt key is the mistake to name, where it is, rather than "missing key".
    for (const auto& [k, v] : t_)
      if (!seen_.count(std::string(k.str())) && is_typo_of(k.str(), key))
        fail(k.source(), fmt::format("{}: unknown key '{}' (did you mean '{}'?)", context_, k.str(), key));
    fail(t_.source(), fmt::format("{}: missing key '{}'", context_, key));
  }
  bool has(const char* key) const { return t_.contains(key); }

  std::string string(const toml::node& n, const char* key) const {
    if (!n.is_string()) wrong(n, key, "a string");
    return n.as_string()->get();
  }
  std::int64_t integer(const toml::node& n, const char* key, std::int64_t lo, std::int64_t hi) const {
    if (!n.is_integer()) wrong(n, key, "an integer");
    const std::int64_t v = n.as_integer()->get();
    if (v < lo || v > hi)
      fail(n.source(), fmt::format("{}: '{}' = {} is out of range [{}, {}]", context_, key, v, lo, hi));
    return v;
  }
  double number(const toml::node& n, const char* key, double lo, double hi) const {
    if (!n.is_number()) wrong(n, key, "a number");
    const double v = n.value<double>().value_or(0);
    if (!(v >= lo && v <= hi))
      fail(n.source(), fmt::format("{}: '{}' = {} is out of range [{}, {}]", context_, key, v, lo, hi));
    return v;
  }
  bool boolean(const toml::node& n, const char* key) const {
    if (!n.is_boolean()) wrong(n, key, "a boolean");
    return n.as_boolean()->get();
  }
  const toml::array& array(const toml::node& n, const char* key) const {
    if (!n.is_array()) wrong(n, key, "an array");
    return *n.as_array();
  }
  const toml::table& table(const toml::node& n, const char* key) const {
    if (!n.is_table()) wrong(n, key, "a table");
    return *n.as_table();
  }

  std::string string_or(const char* key, std::string fallback) {
    const toml::node* n = find(key);
    return n ? string(*n, key) : fallback;
  }
  std::int64_t integer_or(const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
    const toml::node* n = find(key);
    return n ? integer(*n, key, lo, hi) : fallback;
  }
  double number_or(const char* key, double fallback, double lo, double hi) {
    const toml::node* n = find(key);
    return n ? number(*n, key, lo, hi) : fallback;
  }
  bool boolean_or(const char* key, bool fallback) {
    const toml::node* n = find(key);
    return n ? boolean(*n, key) : fallback;
  }

  void done() const {
    for (const auto& [key, value] : t_) {
      if (seen_.count(std::string(key.str()))) continue;
      std::string hint;
      std::size_t best = std::string::npos;
      for (const auto& known : seen_)  // the closest key asked for is the hint
        if (is_typo_of(key.str(), known) && edit_distance(key.str(), known) < best) {
          best = edit_distance(key.str(), known);
          hint = fmt::format(" (did you mean '{}'?)", known);
        }
      fail(key.source(), fmt::format("{}: unknown key '{}'{}", context_, key.str(), hint));
    }
  }

  const toml::table& source_table() const { return t_; }
  const std::string& context() const { return context_; }

 private:
  [[noreturn]] void fail(const toml::source_region& r, const std::string& message) const {
    throw Error(fmt::format("{}: {}", where(r), message));
  }
  [[noreturn]] void wrong(const toml::node& n, const char* key, const char* want) const {
    fail(n.source(), fmt::format("{}: '{}' must be {}, not {}", context_, key, want, type_name(n)));
  }

  const toml::table& t_;
  std::string context_;
  std::set<std::string> seen_;
};

}  // namespace harness
