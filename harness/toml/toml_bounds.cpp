#include "harness/toml/toml_bounds.hpp"

#include <algorithm>
#include <vector>

namespace harness {
namespace {

// Only as much lexing as tells keys, values, strings and comments apart; toml++ validates afterwards.
class bounds_scanner {
 public:
  bounds_scanner(std::string_view text, int max_depth) : t_(text), max_depth_(max_depth) {}

  std::optional<toml_bounds_violation> run() {
    while (i_ < t_.size() && !violation_) step();
    return std::move(violation_);
  }

 private:
  void step() {
    const char c = t_[i_];
    if (c == '#') {
      while (i_ < t_.size() && t_[i_] != '\n') ++i_;
    } else if (c == '\n') {
      newline();
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++i_;
    } else if (c == '"' || c == '\'') {
      if (in_key_) begin_key_part();
      skip_string(c);
    } else if (c == '[' && in_key_ && key_parts_ == 0 && open_.empty()) {
      table_header();
    } else if (in_key_) {
      key_char(c);
    } else {
      value_char(c);
    }
  }

  void newline() {
    ++i_;
    ++line_;
    line_start_ = i_;
    if (open_.empty()) start_key();  // outside brackets: a key, a header, or nothing
  }

  void start_key() {
    in_key_ = true;
    key_parts_ = 0;
  }

  void begin_key_part() {
    if (key_parts_ == 0) key_parts_ = 1;
    check(table_parts_ + open_depth_ + key_parts_, "keys");
  }

  void key_char(char c) {
    if (c == '.') {
      ++key_parts_;
      check(table_parts_ + open_depth_ + key_parts_, "keys");
    } else if (c == '=') {
      in_key_ = false;
      pending_parts_ = key_parts_;  // its value sits below its parts
    } else if (c == '}' || c == ']' || c == '{' || c == '[') {
      value_char(c);  // brackets count even here
      return;
    } else {
      begin_key_part();
    }
    ++i_;
  }

  void value_char(char c) {
    if (c == '[' || c == '{') {
      // "x.y = [": the array is as deep as the key's parts; its elements one level below.
      const int share = std::max(1, pending_parts_);
      open_.push_back({c, share});
      open_depth_ += share;
      check(table_parts_ + open_depth_, "values");
      if (c == '{') start_key();
    } else if ((c == ']' || c == '}') && !open_.empty()) {
      open_depth_ -= open_.back().share;
      open_.pop_back();
      in_key_ = false;
    } else if (c == ',' && !open_.empty() && open_.back().bracket == '{') {
      start_key();
    }
    pending_parts_ = 0;
    if (in_key_ && c != '{' && c != ',') in_key_ = false;
    ++i_;
  }

  // A header's parts are the depth of every key below it.
  void table_header() {
    ++i_;
    if (i_ < t_.size() && t_[i_] == '[') ++i_;
    table_parts_ = 1;
    while (i_ < t_.size() && t_[i_] != ']' && t_[i_] != '\n' && !violation_) {
      const char c = t_[i_];
      if (c == '"' || c == '\'') {
        skip_string(c);
        continue;
      }
      if (c == '.') check(++table_parts_, "table names");
      ++i_;
    }
    in_key_ = false;  // the rest is "]", "]]" and perhaps a comment
  }

  void skip_string(char quote) {
    const bool multi = i_ + 2 < t_.size() && t_[i_ + 1] == quote && t_[i_ + 2] == quote;
    i_ += multi ? 3 : 1;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\\' && quote == '"' && i_ + 1 < t_.size() && t_[i_ + 1] != '\n') {
        i_ += 2;
      } else if (c == '\n') {
        if (!multi) return;  // unterminated: toml++ reports it
        newline_in_string();
      } else if (c == quote && !multi) {
        ++i_;
        return;
      } else if (c == quote && i_ + 2 < t_.size() && t_[i_ + 1] == quote && t_[i_ + 2] == quote) {
        // """a""""" is the text a"".
        i_ += 3;
        for (int extra = 0; extra < 2 && i_ < t_.size() && t_[i_] == quote; ++extra) ++i_;
        return;
      } else {
        ++i_;
      }
    }
  }

  void newline_in_string() {
    ++i_;
    ++line_;
    line_start_ = i_;
  }

  void check(int depth, const char* what) {
    if (depth <= max_depth_ || violation_) return;
    violation_ = toml_bounds_violation{line_, i_ - line_start_ + 1,
                                       fmt::format("{} nested deeper than {} levels", what, max_depth_)};
  }

  struct open_bracket {
    char bracket;
    int share;  // the parts of the key whose value it is, or 1 for an array element
  };

  std::string_view t_;
  int max_depth_;
  std::size_t i_ = 0, line_ = 1, line_start_ = 0;
  std::vector<open_bracket> open_;
  int open_depth_ = 0;  // the shares of open_
  int table_parts_ = 0;
  int key_parts_ = 0;
  int pending_parts_ = 0;  // until its value starts
  bool in_key_ = true;
  std::optional<toml_bounds_violation> violation_;
};

// A bound independent of how the scan reads strings: keys, table names and inline tables sit on one line.
constexpr std::size_t max_line_nesting_chars = 256;

std::optional<toml_bounds_violation> find_crowded_line(std::string_view text) {
  std::size_t line = 1, count = 0, start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      count = 0;
      start = i + 1;
    } else if ((c == '.' || c == '[' || c == '{') && ++count > max_line_nesting_chars) {
      return toml_bounds_violation{
          line, i - start + 1, fmt::format("more than {} of '.', '[' and '{{' on one line", max_line_nesting_chars)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<toml_bounds_violation> find_toml_bounds_violation(std::string_view text, std::size_t max_bytes,
                                                                int max_depth) {
  if (text.size() > max_bytes)
    return toml_bounds_violation{
        1, 1, fmt::format("the file is {} bytes, more than the {} accepted", text.size(), max_bytes)};
  if (auto v = bounds_scanner(text, max_depth).run()) return v;
  return find_crowded_line(text);
}

}  // namespace harness
