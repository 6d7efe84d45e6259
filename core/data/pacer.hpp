#pragma once
// Paces a sender to a packet rate by counting from the start instant (no drift: after n datagrams the
// sender is never more than one batch ahead of n / rate), and sleeps in slices long enough that the
// kernel timer is accurate but short enough that every 100-ms window gets its share.
//
// A sender that fell behind (its core taken away for a few milliseconds) catches up, so the test's total
// stays exact, but no faster than catch_up x the rate: a token bucket of a millisecond's datagrams (or
// one send batch, or two, never over 10 ms of them) refills at that speed. Without it the backlog would
// leave at full speed, a burst above the configured rate that a policer on the circuit would drop and no
// 100-ms interval should show.
#include "core/base/clock.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stop_token>

namespace nb {

class pacer {
 public:
  static constexpr double catch_up = 1.02;

  // pps <= 0: unlimited. `start_mono_ns`: when the sender actually began (its thread's wake-up, not the
  // agreed instant), so a thread that woke late has no backlog to send. `batch_size`: the most datagrams
  // the caller sends at once.
  pacer(double pps, std::int64_t start_mono_ns, std::size_t batch_size = 1) noexcept
      : pps_(pps), start_(start_mono_ns), last_(start_mono_ns) {
    if (pps_ > 0) {
      // Wake about every 50 us at high rates (a batch per wake-up), once per datagram at low rates.
      min_batch_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(pps_ * 50e-6));
      // A millisecond's datagrams, or one system call's batch so that a sender whose wake-ups the
      // scheduler delays by a few milliseconds keeps its rate, but never more than 10 ms of datagrams
      // (a policer's usual burst allowance): a whole batch (1024 datagrams at -m 1) is 100 ms at 10 kpps.
      // Two at least, where 10 ms holds two: a bucket of one fills in 1 / (catch_up x rate), so a sender
      // that is behind and wakes later than 2 % of the interval after each send stays behind (TCP at
      // 200 Mbit/s in 64 KiB messages, 2.6 ms apart: 52 us, less than this machine's wake-up latency).
      // With room for a second, the time lost to a late wake-up still fills the bucket.
      const double batch = std::min(std::max(static_cast<double>(batch_size), 2.0), pps_ * max_burst_s);
      depth_ = std::max({pps_ * 1e-3, batch, static_cast<double>(min_batch_)});
      tokens_ = depth_;
    }
  }

  // How many datagrams may go now, at most `max`, given `done` so far; sleeps first when none is due.
  // Returns 0 only when `end_mono_ns` comes before the next datagram is due, or a stop is requested (a
  // long wait at a low rate is cut into slices that look at the stop token). The caller sends what it
  // is given (the count is spent from the bucket).
  std::size_t due(std::uint64_t done, std::size_t max, std::int64_t end_mono_ns, const std::stop_token& stop) noexcept {
    if (pps_ <= 0) return max;
    for (;;) {
      std::int64_t now = mono_ns();
      if (now >= end_mono_ns || stop.stop_requested()) return 0;
      tokens_ = std::min(depth_, tokens_ + static_cast<double>(now - last_) * pps_ * catch_up / 1e9);
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
        // Datagram k (from 0) is due at k / rate (`allowed` above), so a batch is due when its last one
        // is: done + min_batch - 1. Rounded up, so that the wake-up never comes a hair early and loops.
        const double due_at = static_cast<double>(done + min_batch_ - 1) * 1e9 / pps_;
        wake = start_ + static_cast<std::int64_t>(std::ceil(due_at)) + 1;
      } else {  // behind, the bucket empty: until it holds a batch (or what is due, if less)
        double need = static_cast<double>(std::min(behind, min_batch_)) - tokens_;
        wake = now + static_cast<std::int64_t>(need * 1e9 / (pps_ * catch_up)) + 1;
      }
      sleep_until_ns(CLOCK_MONOTONIC, std::min({wake, end_mono_ns, now + stop_slice_ns}));
    }
  }

 private:
  static constexpr std::int64_t stop_slice_ns = 100'000'000;
  static constexpr double max_burst_s = 0.010;  // the bucket never holds more than this much of the rate
  double pps_;
  std::int64_t start_;
  std::int64_t last_;  // when the bucket was last filled
  std::uint64_t min_batch_ = 1;
  double depth_ = 0;  // the bucket's size, datagrams
  double tokens_ = 0;
};

}  // namespace nb
