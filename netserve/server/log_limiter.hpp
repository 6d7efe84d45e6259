#pragma once
// A token bucket for log lines a peer can cause (refusals, closings; never a test's result line).
// Single-threaded: the control plane's.
#include <algorithm>
#include <cstdint>

namespace nb::serve {

class log_limiter {
 public:
  log_limiter(double per_second, double burst) noexcept : per_second_(per_second), burst_(burst), tokens_(burst) {}

  // `left_out`: lines refused since the last one written.
  bool allow(std::int64_t now_ns, std::uint64_t& left_out) noexcept {
    if (last_ns_ != 0)
      tokens_ = std::min(burst_, tokens_ + static_cast<double>(now_ns - last_ns_) * 1e-9 * per_second_);
    last_ns_ = now_ns;
    if (tokens_ < 1) {
      ++left_out_;
      return false;
    }
    tokens_ -= 1;
    left_out = left_out_;
    left_out_ = 0;
    return true;
  }

 private:
  double per_second_, burst_, tokens_;
  std::int64_t last_ns_ = 0;
  std::uint64_t left_out_ = 0;
};

inline constexpr double peer_log_per_second = 1, peer_log_burst = 20;

}  // namespace nb::serve
