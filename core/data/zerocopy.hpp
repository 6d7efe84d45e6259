#pragma once
// MSG_ZEROCOPY's completions on one socket: unread ones fill its option memory until send() fails with
// ENOBUFS. Each says whether the kernel copied after all, as it always does over loopback.
#include <cstdint>
#include <string>
#include <system_error>

namespace nb {

struct zerocopy_counts {
  std::uint64_t sends = 0;  // that queued bytes
  std::uint64_t completed = 0;
  std::uint64_t copied = 0;

  zerocopy_counts& operator+=(const zerocopy_counts& o) noexcept {
    sends += o.sends, completed += o.completed, copied += o.copied;
    return *this;
  }
};

// "zerocopy", or what the kernel did instead.
std::string zerocopy_words(const zerocopy_counts& c);

class zerocopy_completions {
 public:
  explicit zerocopy_completions(int fd) noexcept : fd_(fd) {}

  void sent() noexcept { ++counts_.sends; }
  std::uint64_t outstanding() const noexcept { return counts_.sends - counts_.completed; }
  const zerocopy_counts& counts() const noexcept { return counts_; }

  // Without blocking. The error queue also carries real socket errors, which end the stream.
  std::error_code drain();
  std::error_code wait(std::int64_t timeout_ns);

 private:
  int fd_;
  zerocopy_counts counts_;
};

}  // namespace nb
