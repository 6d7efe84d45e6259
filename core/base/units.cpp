#include "core/base/units.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace nb {
namespace {

struct number_and_suffix {
  double number;
  char suffix;  // 0 when none
};

number_and_suffix split_number(std::string_view text, std::string_view what) {
  if (text.empty()) throw std::invalid_argument(fmt::format("empty {}", what));
  char suffix = 0;
  if (char c = text.back(); std::isalpha(static_cast<unsigned char>(c))) {
    suffix = c;
    text.remove_suffix(1);
  }
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(number) || number < 0)
    throw std::invalid_argument(fmt::format("bad {} '{}{}'", what, text, suffix ? std::string(1, suffix) : ""));
  return {number, suffix};
}

constexpr std::int64_t max_period_seconds = 31LL * 24 * 3600;

[[noreturn]] void refuse_period(std::string_view text, std::string_view why) {
  throw std::invalid_argument(
      fmt::format("'{}' is not a period: {} (a whole number and a unit, h, m or s, in that order: 30s, 15m, 1h, 2h30m)",
                  text, why));
}

}  // namespace

double parse_rate(std::string_view text) {
  auto [n, suffix] = split_number(text, "rate");
  switch (suffix) {
    case 0: return n;
    case 'k':
    case 'K': return n * 1e3;
    case 'm':
    case 'M': return n * 1e6;
    case 'g':
    case 'G': return n * 1e9;
    case 't':
    case 'T': return n * 1e12;
    default: throw std::invalid_argument(fmt::format("bad rate suffix '{}' in '{}'", suffix, text));
  }
}

bool rate_units::valid(char c) { return std::string_view("kmgKMG").find(c) != std::string_view::npos && c != 0; }

double rate_units::of(double bits_per_second) const {
  switch (letter) {
    case 'k': return bits_per_second / 1e3;
    case 'g': return bits_per_second / 1e9;
    case 'K': return bits_per_second / 8 / 1024;
    case 'M': return bits_per_second / 8 / (1024.0 * 1024);
    case 'G': return bits_per_second / 8 / (1024.0 * 1024 * 1024);
    default: return bits_per_second / 1e6;
  }
}

const char* rate_units::name() const {
  switch (letter) {
    case 'k': return "kbit/s";
    case 'g': return "Gbit/s";
    case 'K': return "KiB/s";
    case 'M': return "MiB/s";
    case 'G': return "GiB/s";
    default: return "Mbit/s";
  }
}

const char* rate_units::column() const {
  switch (letter) {
    case 'k': return "10^3bits/sec";
    case 'g': return "10^9bits/sec";
    case 'K': return "KBytes/sec";
    case 'M': return "MBytes/sec";
    case 'G': return "GBytes/sec";
    default: return "10^6bits/sec";
  }
}

std::uint64_t parse_size(std::string_view text) {
  auto [n, suffix] = split_number(text, "size");
  double mult = 1;
  switch (suffix) {
    case 0: break;
    case 'k':
    case 'K': mult = 1024; break;
    case 'm':
    case 'M': mult = 1024.0 * 1024; break;
    case 'g':
    case 'G': mult = 1024.0 * 1024 * 1024; break;
    default: throw std::invalid_argument(fmt::format("bad size suffix '{}' in '{}'", suffix, text));
  }
  double bytes = n * mult;
  if (bytes != std::floor(bytes) || bytes > 1e15) throw std::invalid_argument(fmt::format("bad size '{}'", text));
  return static_cast<std::uint64_t>(bytes);
}

std::string format_size(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{}M", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{}K", bytes >> 10);
  return fmt::format("{}", bytes);
}

std::string format_si(double value, int precision) {
  static constexpr const char* prefixes[] = {"", "k", "M", "G", "T"};
  int i = 0;
  while (std::fabs(value) >= 1000 && i < 4) {
    value /= 1000;
    ++i;
  }
  return fmt::format("{:.{}f} {}", value, precision, prefixes[i]);
}

std::chrono::seconds parse_period(std::string_view text) {
  if (text.empty()) refuse_period(text, "it is empty");
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
      if (i - digits_from >= 8) refuse_period(text, "a number too large");
      n = n * 10 + (text[i++] - '0');
    }
    if (i == digits_from) refuse_period(text, fmt::format("a number is missing before '{}'", text.substr(i, 1)));
    if (i == text.size()) refuse_period(text, "the unit is missing after the last number");
    const auto u = units.find(text[i]);
    if (u == std::string_view::npos) refuse_period(text, fmt::format("'{}' is not a unit", text.substr(i, 1)));
    if (u < next_unit) refuse_period(text, "units out of order or repeated");
    next_unit = u + 1;
    total += n * unit_seconds[u];
    ++i;
  }
  if (total < 1) refuse_period(text, "the shortest period is 1s");
  if (total > max_period_seconds) refuse_period(text, "the longest period is 31 days (744h)");
  return std::chrono::seconds(total);
}

std::string format_period(std::chrono::seconds s) {
  const auto n = s.count();
  std::string out;
  if (n >= 3600) out += fmt::format("{}h", n / 3600);
  if (n % 3600 >= 60) out += fmt::format("{}m", n % 3600 / 60);
  if (n % 60 || n == 0) out += fmt::format("{}s", n % 60);
  return out;
}

}  // namespace nb
