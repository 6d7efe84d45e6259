#pragma once
// Paces a sender to a packet rate counted from its start, so it never drifts. A sender that fell behind
// catches up no faster than pacing_catch_up x the rate (a token bucket): a backlog sent at full speed is a burst
// a policer would drop.
#include "core/base/clock.hpp"
#include "core/base/limits.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stop_token>

namespace nb {

class pacer {
 public:
  // pps <= 0: unlimited. `start_mono_ns`: when the thread actually woke, so a late one has no backlog.
  pacer(double pps, std::int64_t start_mono_ns, std::size_t batch_size = 1) noexcept
      : pps_(pps), start_(start_mono_ns), last_(start_mono_ns) {
    if (pps_ > 0) {
      // Wake about every 50 us at high rates, once per datagram at low rates.
      min_batch_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(pps_ * 50e-6));
      // A millisecond's or a call's batch, so scheduler delays keep the rate, but at most a policer's 10 ms
      // burst. Two at least: with one, a sender behind that wakes late after each send never catches up.
      const double batch = std::min(std::max(static_cast<double>(batch_size), 2.0), pps_ * pacing_max_burst_s);
      depth_ = std::max({pps_ * 1e-3, batch, static_cast<double>(min_batch_)});
      tokens_ = depth_;
    }
  }

  // 0 only at `end_mono_ns` or a stop.
  std::size_t due(std::uint64_t done, std::size_t max, std::int64_t end_mono_ns, const std::stop_token& stop) noexcept {
    if (pps_ <= 0) return max;
    for (;;) {
      std::int64_t now = mono_ns();
      if (now >= end_mono_ns || stop.stop_requested()) return 0;
      tokens_ = std::min(depth_, tokens_ + static_cast<double>(now - last_) * pps_ * pacing_catch_up / 1e9);
      last_ = now;
      auto allowed = static_cast<std::uint64_t>(static_cast<double>(now - start_) * pps_ / 1e9) + 1;
      std::uint64_t behind = allowed > done ? allowed - done : 0;
      auto n = std::min<std::uint64_t>({behind, max, static_cast<std::uint64_t>(tokens_)});
      if (n > 0) {
        tokens_ -= static_cast<double>(n);
        return static_cast<std::size_t>(n);
      }
      std::int64_t wake;
      if (behind == 0) {  // ahead of the schedule: until a batch is due
        // Rounded up, so the wake-up never comes a hair early and loops.
        const double due_at = static_cast<double>(done + min_batch_ - 1) * 1e9 / pps_;
        wake = start_ + static_cast<std::int64_t>(std::ceil(due_at)) + 1;
      } else {  // behind, the bucket empty: until it holds a batch
        double need = static_cast<double>(std::min(behind, min_batch_)) - tokens_;
        wake = now + static_cast<std::int64_t>(need * 1e9 / (pps_ * pacing_catch_up)) + 1;
      }
      sleep_until_ns(CLOCK_MONOTONIC, std::min({wake, end_mono_ns, now + stop_slice_ns}));
    }
  }

 private:
  static constexpr std::int64_t stop_slice_ns = 100'000'000;
  double pps_;
  std::int64_t start_;
  std::int64_t last_;  // the bucket's last fill
  std::uint64_t min_batch_ = 1;
  double depth_ = 0;  // datagrams
  double tokens_ = 0;
};

}  // namespace nb
