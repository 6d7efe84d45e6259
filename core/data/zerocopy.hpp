#pragma once
// MSG_ZEROCOPY's completions on one socket. The kernel numbers every send() that queued bytes with
// MSG_ZEROCOPY, keeps the sender's pages pinned until the peer has acknowledged them, and then reports
// ranges of those numbers on the socket's error queue. A sender must read them: unread ones fill the
// socket's option memory until send() fails with ENOBUFS. Each one also says whether the kernel copied
// after all: loopback always copies (a local receiver cannot share the sender's pages), and so does a
// device that cannot gather from user pages, so "zerocopy" asked is not "zerocopy" done.
#include <cstdint>
#include <string>
#include <system_error>

namespace nb {

struct zerocopy_counts {
  std::uint64_t sends = 0;      // send() calls that queued bytes with MSG_ZEROCOPY
  std::uint64_t completed = 0;  // of them, reported done by the kernel
  std::uint64_t copied = 0;     // of those, the kernel copied after all

  zerocopy_counts& operator+=(const zerocopy_counts& o) noexcept {
    sends += o.sends, completed += o.completed, copied += o.copied;
    return *this;
  }
};

// For a result's batching: "zerocopy", or what the kernel did instead ("zerocopy asked, the kernel
// copied 5200 of 5200 sends").
std::string zerocopy_words(const zerocopy_counts& c);

class zerocopy_completions {
 public:
  explicit zerocopy_completions(int fd) noexcept : fd_(fd) {}

  void sent() noexcept { ++counts_.sends; }
  std::uint64_t outstanding() const noexcept { return counts_.sends - counts_.completed; }
  const zerocopy_counts& counts() const noexcept { return counts_; }

  // Reads every completion queued now, without blocking. An error other than "nothing queued" is
  // returned: the error queue also carries real socket errors, which end the stream.
  std::error_code drain();
  // Waits up to `timeout_ns` for completions to be queued, then drains them.
  std::error_code wait(std::int64_t timeout_ns);

 private:
  int fd_;
  zerocopy_counts counts_;
};

}  // namespace nb
