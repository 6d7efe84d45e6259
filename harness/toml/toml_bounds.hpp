#pragma once
// TOML text is checked for size and nesting before toml++ sees it. toml++ bounds the nesting of values
// (arrays, inline tables) but not that of keys: a dotted key of 50 000 parts ("a.a.a...", 100 KB) builds
// a chain of tables 50 000 deep whose recursive destruction overflows the stack. A plan needs a depth of
// four or five; the limits below leave ample room and keep every recursion shallow.
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace harness {

constexpr std::size_t max_toml_bytes = 1 << 20;
constexpr int max_toml_depth = 32;  // key parts, table-header parts and open brackets, added up

struct toml_bounds_violation {
  std::size_t line = 0, column = 0;  // 1-based, as toml++ counts them (column in bytes here)
  std::string message;
};

// The first place where `text` is too large or nests deeper than `max_depth`; nullopt when within bounds.
// A lexical scan: strings and comments are skipped, so a '.' or '[' inside them counts for nothing.
std::optional<toml_bounds_violation> find_toml_bounds_violation(std::string_view text,
                                                                std::size_t max_bytes = max_toml_bytes,
                                                                int max_depth = max_toml_depth);

// Parses `text` (named `path` in errors) once it is within bounds. Error is the exception thrown, with
// "path:line:col: TOML syntax: ..." as a compiler says it: plan_error for plans, lab_error for labs.
template <class Error>
toml::table parse_toml_bounded(const std::string& text, const std::string& path) {
  if (auto v = find_toml_bounds_violation(text))
    throw Error(fmt::format("{}:{}:{}: TOML syntax: {}", path, v->line, v->column, v->message));
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw Error(fmt::format("{}:{}:{}: TOML syntax: {}", path, at.line, at.column, e.description()));
  }
}

// The whole of the file `path`; Error "path: cannot read <what>: <the system's reason>" when it cannot
// be opened or read ("No such file or directory", "Permission denied", "Is a directory").
template <class Error>
std::string read_file_text(const std::string& path, std::string_view what) {
  auto fail = [&](int err) { return Error(fmt::format("{}: cannot read {}: {}", path, what, std::strerror(err))); };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw fail(EISDIR);
  errno = 0;
  std::ifstream in(path);
  if (!in) throw fail(errno != 0 ? errno : ENOENT);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw fail(errno != 0 ? errno : EIO);
  return text.str();
}

}  // namespace harness
