#pragma once
// Size and nesting checked before toml++ parses: it bounds nested values but not dotted keys, and a key of
// 50 000 parts builds tables whose recursive destruction overflows the stack.
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
constexpr int max_toml_depth = 32;  // key parts, header parts and open brackets, added up

struct toml_bounds_violation {
  std::size_t line = 0, column = 0;  // 1-based, as toml++ counts; column in bytes
  std::string message;
};

// The first place too large or too deep; strings and comments count for nothing.
std::optional<toml_bounds_violation> find_toml_bounds_violation(std::string_view text,
                                                                std::size_t max_bytes = max_toml_bytes,
                                                                int max_depth = max_toml_depth);

// Error is plan_error or lab_error, with "path:line:col: TOML syntax: ..." as a compiler says it.
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

// Error "path: cannot read <what>: <strerror>" when it cannot be opened or read.
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
