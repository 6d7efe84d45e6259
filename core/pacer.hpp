#pragma once
// Paces a sender to a packet rate by counting from the start instant (no drift: after n datagrams the
// sender is never more than one batch ahead of n / rate), and sleeps in slices long enough that the
// kernel timer is accurate but short enough that every 100-ms window gets its share.
#include "core/clock.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stop_token>

namespace nb {

class pacer {
 public:
  // pps <= 0: unlimited.
  pacer(double pps, std::int64_t start_mono_ns) noexcept : pps_(pps), start_(start_mono_ns) {
    if (pps_ > 0) {
      // Wake about every 50 us at high rates (a batch per wake-up), once per datagram at low rates.
      min_batch_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(pps_ * 50e-6));
    }
  }

  // How many datagrams may go now, at most `max`, given `done` so far; sleeps first when none is due.
  // Returns 0 only when `end_mono_ns` comes before the next datagram is due, or a stop is requested (a
  // long wait at a low rate is cut into slices that look at the stop token).
  std::size_t due(std::uint64_t done, std::size_t max, std::int64_t end_mono_ns, const std::stop_token& stop) const noexcept {
    if (pps_ <= 0) return max;
    for (;;) {
      std::int64_t now = mono_ns();
      if (now >= end_mono_ns || stop.stop_requested()) return 0;
      auto allowed = static_cast<std::uint64_t>(static_cast<double>(now - start_) * pps_ / 1e9) + 1;
      if (allowed > done) return static_cast<std::size_t>(std::min<std::uint64_t>(allowed - done, max));
      std::int64_t wake = start_ + static_cast<std::int64_t>(static_cast<double>(done + min_batch_) * 1e9 / pps_);
      sleep_until_ns(CLOCK_MONOTONIC, std::min({wake, end_mono_ns, now + stop_slice_ns}));
    }
  }

 private:
  static constexpr std::int64_t stop_slice_ns = 100'000'000;
  double pps_;
  std::int64_t start_;
  std::uint64_t min_batch_ = 1;
};

}  // namespace nb
