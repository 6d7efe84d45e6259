#pragma once
// Network units: rates with k/M/G suffixes (decimal, as iperf and netperf read them), sizes, durations.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace nb {

// "100m", "9G", "1.5k", "250000" -> bits (or units) per second. Throws std::invalid_argument.
double parse_rate(std::string_view text);
// "128K", "4M", "65507" -> bytes, binary suffixes as netperf's -s/-S. Throws std::invalid_argument.
std::uint64_t parse_size(std::string_view text);
// 65536 -> "64K", 1048576 -> "1M", 1500 -> "1500": as parse_size reads it back.
std::string format_size(std::uint64_t bytes);
// 1234567.0 -> "1.23 M"; for console figures.
std::string format_si(double value, int precision = 2);
// "30s", "15m", "1h", "2h30m", "1h30m15s": h, m, s in that order, each at most once, whole numbers; at
// least 1 s, at most 31 days (a longer wait is a cron job's). Throws std::invalid_argument.
std::chrono::seconds parse_period(std::string_view text);
// 9000 s -> "2h30m", 45 s -> "45s": the shortest form parse_period reads back.
std::string format_period(std::chrono::seconds s);

// The units of printed rates, by -f's letter, on which netperf, iperf2 and iperf3 agree: k m g are
// 10^3, 10^6, 10^9 bits per second; K M G are 2^10, 2^20, 2^30 bytes per second.
struct rate_units {
  char letter = 'm';  // netperf's default
  static bool valid(char c);
  double of(double bits_per_second) const;  // in these units
  const char* name() const;                 // "Mbit/s", "MiB/s"
  const char* column() const;               // netperf's table heading: "10^6bits/sec", "MBytes/sec"
};

inline double bits_per_second(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) * 8.0 / seconds : 0.0;
}
inline double per_second(std::uint64_t count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0.0;
}

}  // namespace nb
