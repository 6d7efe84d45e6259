#pragma once
// Durations on the monotonic clock, agreement between hosts on the wall clock.
#include <cerrno>
#include <cstdint>
#include <ctime>

namespace nb {

// clock_gettime fails only for an unknown clock id.
inline std::int64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  (void)::clock_gettime(id, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
inline std::int64_t mono_ns() noexcept { return clock_ns(CLOCK_MONOTONIC); }
inline std::int64_t wall_ns() noexcept { return clock_ns(CLOCK_REALTIME); }

inline double ns_to_s(std::int64_t ns) noexcept { return static_cast<double>(ns) / 1e9; }
inline std::int64_t s_to_ns(double s) noexcept { return static_cast<std::int64_t>(s * 1e9); }

// A negative instant is past (clock_nanosleep would refuse it with EINVAL).
inline void sleep_until_ns(clockid_t id, std::int64_t t) noexcept {
  if (t < 0) return;
  timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  while (::clock_nanosleep(id, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace nb
