#pragma once
// Log lines a peer can cause (a refusal, a connection closed for a protocol error) come through a token
// bucket: `burst` at once, then `per_second`; the next line written says how many were left out. A test's
// result line is no such line: it is always written. Single-threaded: the control plane's.
#include <algorithm>
#include <cstdint>

namespace nb::serve {

class log_limiter {
 public:
  log_limiter(double per_second, double burst) noexcept : per_second_(per_second), burst_(burst), tokens_(burst) {}

  // Whether a line may be written at `now_ns` (monotonic); when it may, `left_out` is how many lines were
  // refused since the last one written.
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

// What one netserve lets its peers write: 20 lines at once, then one a second.
inline constexpr double peer_log_per_second = 1, peer_log_burst = 20;

}  // namespace nb::serve
