#include "harness/watch/duration.hpp"

#include <fmt/format.h>

#include <cctype>

namespace harness::watch {

namespace {

constexpr std::int64_t max_seconds = 31LL * 24 * 3600;

[[noreturn]] void refuse(std::string_view text, std::string_view why) {
  throw std::invalid_argument(
      fmt::format("'{}' is not a period: {} (a whole number and a unit, h, m or s, in that order: 30s, 15m, 1h, 2h30m)",
                  text, why));
}

}  // namespace

std::chrono::seconds parse_period(std::string_view text) {
  if (text.empty()) refuse(text, "it is empty");
  constexpr std::string_view units = "hms";
  constexpr std::int64_t unit_seconds[] = {3600, 60, 1};
  std::size_t next_unit = 0;  // units must come in order, each once: "1m1h" or "1h1h" is a typo
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t n = 0;
    const std::size_t digits_from = i;
    // Eight digits bound a component below any overflow; the total is checked against 31 days anyway.
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (i - digits_from >= 8) refuse(text, "a number too large");
      n = n * 10 + (text[i++] - '0');
    }
    if (i == digits_from) refuse(text, fmt::format("a number is missing before '{}'", text.substr(i, 1)));
    if (i == text.size()) refuse(text, "the unit is missing after the last number");
    const auto u = units.find(text[i]);
    if (u == std::string_view::npos) refuse(text, fmt::format("'{}' is not a unit", text.substr(i, 1)));
    if (u < next_unit) refuse(text, "units out of order or repeated");
    next_unit = u + 1;
    total += n * unit_seconds[u];
    ++i;
  }
  if (total < 1) refuse(text, "the shortest period is 1s");
  if (total > max_seconds) refuse(text, "the longest period is 31 days (744h)");
  return std::chrono::seconds(total);
}

std::string period_text(std::chrono::seconds s) {
  const auto n = s.count();
  std::string out;
  if (n >= 3600) out += fmt::format("{}h", n / 3600);
  if (n % 3600 >= 60) out += fmt::format("{}m", n % 3600 / 60);
  if (n % 60 || n == 0) out += fmt::format("{}s", n % 60);
  return out;
}

}  // namespace harness::watch
