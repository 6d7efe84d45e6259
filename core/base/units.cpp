#include "core/base/units.hpp"

#include <fmt/format.h>

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

}  // namespace nb
