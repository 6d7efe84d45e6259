#pragma once
// A whole number given as text, all of it: "24" is 24; "24x", " 24", "+24", "" and out-of-range values
// are no number at all (std::stoi and atoi would read the first three as 24). The one such parser in
// the project, for command lines, plan files and the lines our own programs print.
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>

namespace nb {

// Decimal digits (a leading '-' for a signed T) and nothing else, within [lo, hi]; nullopt otherwise.
template <class T>
std::optional<T> parse_whole(std::string_view text, T lo = std::numeric_limits<T>::min(),
                             T hi = std::numeric_limits<T>::max()) noexcept {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || stop != end || value < lo || value > hi) return std::nullopt;
  return value;
}

}  // namespace nb
