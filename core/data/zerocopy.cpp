#include "core/data/zerocopy.hpp"

#include "core/sys/eintr.hpp"

#include <fmt/format.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace nb {

std::string zerocopy_words(const zerocopy_counts& c) {
  if (c.completed == 0) return fmt::format("zerocopy asked, none of {} sends confirmed by the end", c.sends);
  std::string words = c.copied == 0
                          ? "zerocopy"
                          : fmt::format("zerocopy asked, the kernel copied {} of {} sends", c.copied, c.completed);
  if (c.completed < c.sends) words += fmt::format(" ({} of {} unconfirmed at the end)", c.sends - c.completed, c.sends);
  return words;
}

std::error_code zerocopy_completions::drain() {
  for (;;) {
    alignas(cmsghdr) char control[128];
    msghdr msg{};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    if (retry_eintr([&] { return ::recvmsg(fd_, &msg, MSG_ERRQUEUE | MSG_DONTWAIT); }) < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return {};
      return {errno, std::system_category()};
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      const bool recverr = (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
                           (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR);
      if (!recverr) continue;
      const auto* e = reinterpret_cast<const sock_extended_err*>(CMSG_DATA(c));
      if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY) {
        if (e->ee_errno) return {static_cast<int>(e->ee_errno), std::system_category()};
        continue;
      }
      // An inclusive range of 32-bit send numbers, which wrap.
      const std::uint64_t n = static_cast<std::uint32_t>(e->ee_data - e->ee_info) + std::uint64_t{1};
      counts_.completed += n;
      if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED) counts_.copied += n;
    }
  }
}

std::error_code zerocopy_completions::wait(std::int64_t timeout_ns) {
  pollfd p{fd_, 0, 0};  // POLLERR is always reported
  ::poll(&p, 1, static_cast<int>(timeout_ns / 1'000'000));
  return drain();
}

}  // namespace nb
