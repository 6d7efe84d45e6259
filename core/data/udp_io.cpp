#include "core/data/udp_io.hpp"

#include "core/base/clock.hpp"
#include "core/sys/eintr.hpp"
#include "core/sys/kernel_features.hpp"
#include "core/wire/native/flow.hpp"

#include <fmt/format.h>

#include <netinet/in.h>
#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nb {
namespace {

constexpr std::size_t max_gso_segments = 64;  // UDP_MAX_SEGMENTS
constexpr std::size_t max_gso_bytes = 65000;  // within an IP datagram's 64 KiB
constexpr std::size_t control_size = CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(timespec));
// Segment size, traffic class, source address (IPv6's, the largest).
constexpr std::size_t send_control_size =
    CMSG_SPACE(sizeof(std::uint16_t)) + CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(in6_pktinfo));

bool transient(int err) {
  return err == ENOBUFS || err == EAGAIN || err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH ||
         err == EPERM;  // EPERM: a local firewall rule dropped it
}

}  // namespace

std::size_t gso_segments_for(std::size_t message_size) noexcept {
  return message_size == 0 ? 0 : std::min(max_gso_segments, max_gso_bytes / message_size);
}

udp_batch_sender::udp_batch_sender(int fd, std::size_t message_size, std::size_t batch, bool try_gso,
                                   std::optional<endpoint> dest, std::optional<endpoint> source, int tos,
                                   payload_format format)
    : fd_(fd),
      size_(message_size),
      batch_(std::max<std::size_t>(batch, 1)),
      dest_(std::move(dest)),
      source_(std::move(source)),
      tos_(tos),
      format_(format) {
  // A kernel before 4.18 skips UDP_SEGMENT rather than refusing it, sending oversized datagrams: only
  // the probe tells.
  if (try_gso && size_ > 0 && kernel_has(kernel_feature::udp_gso)) {
    gso_segments_ = std::max<std::size_t>(gso_segments_for(size_), 1);
  }
  buffer_.assign(batch_ * std::max<std::size_t>(size_, 1), 0);
  msgs_.resize(batch_);
  iovs_.resize(batch_);
  control_.assign(batch_ * send_control_size, 0);
}

std::size_t udp_batch_sender::build_control(msghdr& h, unsigned char* space, std::size_t datagrams) const noexcept {
  std::memset(space, 0, send_control_size);
  h.msg_control = space;
  h.msg_controllen = send_control_size;
  std::size_t used = 0;
  cmsghdr* c = CMSG_FIRSTHDR(&h);
  auto add = [&](int level, int type, const void* data, std::size_t len) {
    c->cmsg_level = level;
    c->cmsg_type = type;
    c->cmsg_len = CMSG_LEN(len);
    std::memcpy(CMSG_DATA(c), data, len);
    used += CMSG_SPACE(len);
    c = CMSG_NXTHDR(&h, c);
  };
  if (datagrams > 1) {  // only a buffer of several datagrams needs cutting
    auto seg = static_cast<std::uint16_t>(size_);
    add(SOL_UDP, UDP_SEGMENT, &seg, sizeof seg);
  }
  const bool v6 = dest_ && dest_->family() == AF_INET6;
  if (tos_ >= 0) add(v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_TCLASS : IP_TOS, &tos_, sizeof tos_);
  if (source_ && v6) {
    in6_pktinfo info{};
    info.ipi6_addr = reinterpret_cast<const sockaddr_in6*>(source_->data())->sin6_addr;
    add(IPPROTO_IPV6, IPV6_PKTINFO, &info, sizeof info);
  } else if (source_) {
    in_pktinfo info{};
    info.ipi_spec_dst = reinterpret_cast<const sockaddr_in*>(source_->data())->sin_addr;
    add(IPPROTO_IP, IP_PKTINFO, &info, sizeof info);
  }
  h.msg_controllen = used;
  if (used == 0) h.msg_control = nullptr;
  return used;
}

void udp_batch_sender::disable_gso() noexcept { gso_segments_ = 1; }

void udp_batch_sender::stamp(std::size_t count, std::uint64_t first_seq, std::int64_t now_wall_ns) noexcept {
  if (size_ < header_size(format_)) return;  // too small to carry a header: counted, not sequenced
  for (std::size_t i = 0; i < count; ++i) write_header(format_, &buffer_[i * size_], first_seq + i, now_wall_ns);
}

std::size_t udp_batch_sender::fill_messages(std::size_t count) noexcept {
  std::size_t per_msg = gso_segments_, n = 0;
  for (std::size_t done = 0; done < count; done += per_msg, ++n) {
    std::size_t k = std::min(per_msg, count - done);
    iovs_[n] = {&buffer_[done * size_], k * size_};
    msghdr& h = msgs_[n].msg_hdr;
    h = {};
    h.msg_iov = &iovs_[n];
    h.msg_iovlen = 1;
    if (dest_) {
      h.msg_name = const_cast<sockaddr*>(dest_->data());
      h.msg_namelen = dest_->size();
    }
    build_control(h, &control_[n * send_control_size], k);
  }
  return n;
}

send_outcome udp_batch_sender::send(std::size_t count, std::uint64_t first_seq, std::int64_t now_wall_ns) {
  send_outcome out;
  count = std::min(count, batch_);
  stamp(count, first_seq, now_wall_ns);
  std::size_t n = fill_messages(count), next = 0;
  while (next < n) {
    int r = retry_eintr([&] { return ::sendmmsg(fd_, &msgs_[next], static_cast<unsigned>(n - next), 0); });
    if (r > 0) {
      for (std::size_t i = next; i < next + static_cast<std::size_t>(r); ++i) out.sent += iovs_[i].iov_len / size_;
      next += static_cast<std::size_t>(r);
      continue;
    }
    int err = errno;
    if (gso_segments_ > 1 && (err == EIO || err == EINVAL || err == ENOPROTOOPT)) {
      std::uint64_t already = out.sent;
      disable_gso();
      out = send(count - already, first_seq + already, now_wall_ns);
      out.sent += already;
      return out;
    }
    if (transient(err)) {
      out.refused += iovs_[next].iov_len / size_;
      ++next;
      continue;
    }
    out.fatal = std::error_code(err, std::system_category());
    break;
  }
  return out;
}

udp_batch_receiver::udp_batch_receiver(int fd, std::size_t batch, bool try_gro) : fd_(fd) {
  // Without kernel timestamps decode() uses the reader's clock, which is all a refusal costs.
  int on = 1;
  if (try_gro && kernel_has(kernel_feature::udp_gro)) gro_ = ::setsockopt(fd_, SOL_UDP, UDP_GRO, &on, sizeof on) == 0;
  (void)::setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  // Only the first datagram's header is copied; MSG_TRUNC gives the length, GRO the segment size.
  buf_size_ = 64;
  batch = std::max<std::size_t>(batch, 1);
  buffer_.resize(batch * buf_size_);
  control_.resize(batch * control_size);
  names_.resize(batch);
  msgs_.resize(batch);
  iovs_.resize(batch);
}

std::size_t udp_batch_receiver::receive_raw(std::error_code& ec) {
  for (std::size_t i = 0; i < msgs_.size(); ++i) {
    iovs_[i] = {&buffer_[i * buf_size_], buf_size_};
    msghdr& h = msgs_[i].msg_hdr;
    h.msg_name = &names_[i];
    h.msg_namelen = sizeof names_[i];
    h.msg_iov = &iovs_[i];
    h.msg_iovlen = 1;
    h.msg_control = &control_[i * control_size];
    h.msg_controllen = control_size;
    h.msg_flags = 0;
  }
  const int r = retry_eintr([&] {
    return ::recvmmsg(fd_, msgs_.data(), static_cast<unsigned>(msgs_.size()), MSG_WAITFORONE | MSG_TRUNC, nullptr);
  });
  if (r >= 0) return static_cast<std::size_t>(r);
  // ECONNREFUSED: ICMP from an earlier send; nothing to read now.
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED) return 0;
  ec = std::error_code(errno, std::system_category());
  return 0;
}

received udp_batch_receiver::decode(std::size_t i) const noexcept {
  const msghdr& h = msgs_[i].msg_hdr;
  received r{reinterpret_cast<const sockaddr*>(&names_[i]), &buffer_[i * buf_size_], msgs_[i].msg_len, 0, 0, 0};
  r.copied = std::min<std::size_t>(r.len, buf_size_);
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&h), c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int seg;
      std::memcpy(&seg, CMSG_DATA(c), sizeof seg);
      r.segment = static_cast<std::size_t>(seg);
    } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      r.arrival_ns = std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
    }
  }
  if (r.arrival_ns == 0) r.arrival_ns = wall_ns();
  return r;
}

namespace {
void set_timeout(int fd, int option, const char* name, std::int64_t ns) {
  timeval tv{static_cast<time_t>(ns / 1'000'000'000), static_cast<suseconds_t>(ns % 1'000'000'000 / 1000)};
  if (::setsockopt(fd, SOL_SOCKET, option, &tv, sizeof tv) != 0) throw fmt::system_error(errno, "setsockopt({})", name);
}
}  // namespace

void set_receive_timeout(int fd, std::int64_t ns) { set_timeout(fd, SO_RCVTIMEO, "SO_RCVTIMEO", ns); }
void set_send_timeout(int fd, std::int64_t ns) { set_timeout(fd, SO_SNDTIMEO, "SO_SNDTIMEO", ns); }

}  // namespace nb
