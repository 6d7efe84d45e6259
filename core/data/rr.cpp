#include "core/data/rr.hpp"

#include "core/base/clock.hpp"
#include "core/data/streams.hpp"
#include "core/data/udp_io.hpp"
#include "core/sys/eintr.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace nb {

short rr_wait_ready(int fd, short events, std::int64_t until) noexcept {
  pollfd p{fd, events, 0};
  const std::int64_t wait = std::clamp<std::int64_t>(until - mono_ns(), 0, rr_poll_ns);
  timespec ts{static_cast<time_t>(wait / 1'000'000'000), static_cast<long>(wait % 1'000'000'000)};
  return ::ppoll(&p, 1, &ts, nullptr) > 0 ? p.revents : 0;
}

std::int64_t rr_timeout_ns(std::uint64_t longest_rtt_ns) noexcept {
  if (longest_rtt_ns == 0) return rr_timeout_ceiling_ns;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::min<std::uint64_t>(longest_rtt_ns, 1ULL << 40) * 4),
                                  rr_timeout_floor_ns, rr_timeout_ceiling_ns);
}

bool rr_request_numbers::set(std::uint64_t n) noexcept {
  std::uint64_t& word = seen_[(n % span) / 64];
  const std::uint64_t bit = std::uint64_t{1} << (n % 64);
  const bool was = (word & bit) != 0;
  word |= bit;
  return was;
}

bool rr_request_numbers::first_time(std::uint64_t n) noexcept {
  if (!any_ || n > highest_) {
    // Slots between the old highest and n still hold numbers a span older.
    if (!any_ || n - highest_ >= span) {
      std::fill(std::begin(seen_), std::end(seen_), 0);
    } else {
      for (std::uint64_t k = highest_ + 1; k != n; ++k) seen_[(k % span) / 64] &= ~(std::uint64_t{1} << (k % 64));
      seen_[(n % span) / 64] &= ~(std::uint64_t{1} << (n % 64));
    }
    any_ = true;
    highest_ = n;
    set(n);
    return true;
  }
  if (highest_ - n >= span) return false;  // too old to tell
  return !set(n);
}

void fill_udp_answer(const unsigned char* request, std::size_t request_copied, unsigned char* out,
                     std::size_t response_size) noexcept {
  const std::size_t echoed = std::min({request_copied, response_size, payload_header_size});
  std::memcpy(out, request, echoed);
  std::memset(out + echoed, 0, response_size - echoed);
}

udp_answerer::udp_answerer(const endpoint& to, const endpoint& from) noexcept : to_(to) {
  msghdr h{};
  h.msg_control = control_;
  h.msg_controllen = sizeof control_;
  cmsghdr* c = CMSG_FIRSTHDR(&h);
  auto put = [&](int level, int type, const auto& info) {
    c->cmsg_level = level;
    c->cmsg_type = type;
    c->cmsg_len = CMSG_LEN(sizeof info);
    std::memcpy(CMSG_DATA(c), &info, sizeof info);
    control_len_ = CMSG_SPACE(sizeof info);
  };
  if (from.family() == AF_INET6) {
    in6_pktinfo info{};
    info.ipi6_addr = reinterpret_cast<const sockaddr_in6*>(from.data())->sin6_addr;
    put(IPPROTO_IPV6, IPV6_PKTINFO, info);
  } else {
    in_pktinfo info{};
    info.ipi_spec_dst = reinterpret_cast<const sockaddr_in*>(from.data())->sin_addr;
    put(IPPROTO_IP, IP_PKTINFO, info);
  }
}

bool udp_answerer::send(int fd, const unsigned char* answer, std::size_t size) const noexcept {
  iovec v{const_cast<unsigned char*>(answer), size};
  msghdr h{};
  h.msg_name = const_cast<sockaddr*>(to_.data());
  h.msg_namelen = to_.size();
  h.msg_iov = &v;
  h.msg_iovlen = 1;
  h.msg_control = const_cast<unsigned char*>(control_);
  h.msg_controllen = control_len_;
  return retry_eintr([&] { return ::sendmsg(fd, &h, MSG_DONTWAIT); }) >= 0;
}

void run_tcp_rr_server(std::stop_token stop, const stream_plan& plan, recv_counters& requests, send_counters& answers,
                       stream_outcome& out) {
  out.batching = "recv/send";
  std::vector<unsigned char> buffer(std::max<std::size_t>(plan.message_size, 64 << 10));
  const std::vector<unsigned char> answer(std::max<std::size_t>(plan.response_size, 1), 0xa5);
  std::uint64_t received = 0, owed = 0;  // owed: answers not yet all written
  std::size_t written = 0;               // of the answer being written
  bool eof = false;
  while (!stop.stop_requested()) {
    bool progress = false;
    if (!eof) {
      ssize_t r = ::recv(plan.fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (r == 0) eof = true;
      else if (r < 0 && !transient_errno(errno)) {
        out.error = fmt::format("recv: {}", std::strerror(errno));
        return;
      } else if (r > 0) {
        const std::int64_t now = wall_ns();
        if (requests.first_arrival_ns.get() == 0) requests.first_arrival_ns.set(now);
        requests.last_arrival_ns.set(now);
        const std::uint64_t before = received / plan.message_size;
        received += static_cast<std::uint64_t>(r);
        requests.bytes.add(static_cast<std::uint64_t>(r));
        owed += received / plan.message_size - before;
        requests.packets.set(received / plan.message_size);
        progress = true;
      }
    }
    while (owed > 0) {
      ssize_t w = ::send(plan.fd, answer.data() + written, plan.response_size - written, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) {
        if (transient_errno(errno)) break;
        out.error = fmt::format("send: {}", std::strerror(errno));
        return;
      }
      written += static_cast<std::size_t>(w);
      answers.bytes.add(static_cast<std::uint64_t>(w));
      progress = true;
      if (written == plan.response_size) {
        written = 0;
        --owed;
        answers.packets.add(1);
      }
    }
    if (eof && owed == 0) return;  // every request answered
    if (!progress)
      rr_wait_ready(plan.fd, static_cast<short>((eof ? 0 : POLLIN) | (owed ? POLLOUT : 0)), mono_ns() + rr_poll_ns);
  }
}

}  // namespace nb
