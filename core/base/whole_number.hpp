#pragma once
// A whole number that is all of the text: std::stoi would read "24x", " 24" and "+24" as 24.
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>

namespace nb {

// Decimal digits (a leading '-' for a signed T) within [lo, hi]; nullopt otherwise.
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
