#include "netserve/netperf/netperf_data.hpp"

#include "core/base/clock.hpp"
#include "core/data/udp_io.hpp"
#include "core/sys/eintr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

namespace nb::serve {

namespace {

constexpr int poll_slice_ms = 100;  // how soon a stop is seen
constexpr std::size_t recv_batch = 64;

std::string failure(const char* what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

}  // namespace

netperf_data::netperf_data(fd_handle socket, netperf_plan plan)
    : socket_(std::move(socket)), plan_(std::move(plan)), thread_([this] { run(); }) {}

netperf_data::~netperf_data() {
  stop();
  if (thread_.joinable()) thread_.join();
}

namespace {

bool same_address(const sockaddr* sa, const sockaddr* peer) noexcept {
  if (sa->sa_family != peer->sa_family) return false;
  if (sa->sa_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(peer)->sin_addr.s_addr;
  if (sa->sa_family == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(peer)->sin6_addr, sizeof(in6_addr)) == 0;
  return false;
}

std::uint16_t port_of(const sockaddr* sa) noexcept {
  return ntohs(sa->sa_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(sa)->sin6_port
                                         : reinterpret_cast<const sockaddr_in*>(sa)->sin_port);
}

}  // namespace

bool netperf_data::admit(const void* address) noexcept {
  const auto* sa = static_cast<const sockaddr*>(address);
  if (!same_address(sa, plan_.peer.data())) {
    ++counts_.foreign;
    return false;
  }
  if (plan_.peer_local && plan_.own && plan_.own->ports.contains(port_of(sa))) {
    ++counts_.from_own;
    return false;
  }
  return true;
}

bool netperf_data::wait_for(int fd, short events) {
  for (;;) {
    if (stop_.load(std::memory_order_relaxed)) return false;
    const std::int64_t left = plan_.deadline_mono_ns - mono_ns();
    if (left <= 0) {
      counts_.timed_out = true;
      return false;
    }
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left / 1'000'000 + 1, poll_slice_ms)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) {
      counts_.error = failure("poll");
      return false;
    }
  }
}

void netperf_data::run() noexcept {
  const std::int64_t began = mono_ns();
  try {
    if (plan_.udp) {
      plan_.rr ? udp_rr() : udp_stream();
    } else if (const int fd = accept_client(); fd >= 0) {
      fd_handle connection(fd);
      socket_.reset();  // one connection per test, as netserver takes
      plan_.rr ? tcp_rr(fd) : tcp_stream(fd);
    }
  } catch (const std::exception& e) {  // allocation
    counts_.error = e.what();
  }
  counts_.elapsed_ns = mono_ns() - began;
  done_.store(true, std::memory_order_release);
}

void netperf_data::udp_stream() {
  // No GRO: the ending zero-length datagrams must be seen one by one.
  udp_batch_receiver rx(socket_.get(), recv_batch, false);
  bool ended = false;
  while (!ended && wait_for(socket_.get(), POLLIN)) {
    std::error_code ec;
    rx.receive(
        [&](const received& d) {
          if (ended || !admit(d.source)) return;
          if (d.len == 0) {
            ended = true;  // netperf sends three
          } else {
            ++counts_.recv_calls;
            counts_.bytes_received += d.len;
          }
        },
        ec);
    if (ec) {
      counts_.error = fmt::format("recvmmsg: {}", ec.message());
      return;
    }
  }
}

// netserver's gathering of requests: docs/serving-stock-clients.md#the-data
void netperf_data::udp_rr() {
  std::vector<unsigned char> buffer(std::max<std::size_t>({plan_.request_size, plan_.response_size, 1}));
  std::size_t got = 0;
  while (wait_for(socket_.get(), POLLIN)) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof(from);
    const ssize_t n = ::recvfrom(socket_.get(), buffer.data() + got, plan_.request_size - got, MSG_DONTWAIT | MSG_TRUNC,
                                 reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      if (nb::transient_errno(errno)) continue;
      counts_.error = failure("recvfrom");
      return;
    }
    if (!admit(&from)) continue;  // nothing reflected to a third party or to itself
    if (n == 0) return;
    ++counts_.recv_calls;
    counts_.bytes_received += static_cast<std::uint64_t>(n);
    got += std::min<std::size_t>(static_cast<std::size_t>(n), plan_.request_size - got);
    if (got < plan_.request_size) continue;
    got = 0;
    const ssize_t sent = ::sendto(socket_.get(), buffer.data(), plan_.response_size, MSG_DONTWAIT,
                                  reinterpret_cast<sockaddr*>(&from), from_len);
    if (sent < 0) {
      ++counts_.failed_sends;
      continue;
    }
    ++counts_.send_calls;
    counts_.bytes_sent += static_cast<std::uint64_t>(sent);
    ++counts_.transactions;
  }
}

int netperf_data::accept_client() {
  while (wait_for(socket_.get(), POLLIN)) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof(from);
    const int fd =
        ::accept4(socket_.get(), reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (nb::transient_errno(errno) || errno == ECONNABORTED) continue;
      counts_.error = failure("accept");
      return -1;
    }
    if (admit(&from)) return fd;
    ::close(fd);
  }
  return -1;
}

void netperf_data::tcp_stream(int fd) {
  const std::size_t size = plan_.receive_size > 0 ? std::min<std::size_t>(plan_.receive_size, 1 << 20) : 128 << 10;
  std::vector<unsigned char> buffer(size);
  while (wait_for(fd, POLLIN)) {
    for (;;) {  // what is queued, then back to the wait, which sees a stop
      const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (n == 0) return;  // the end of the test
      if (n < 0) {
        if (nb::transient_errno(errno)) break;
        counts_.error = failure("recv");
        return;
      }
      ++counts_.recv_calls;
      counts_.bytes_received += static_cast<std::uint64_t>(n);
    }
  }
}

void netperf_data::tcp_rr(int fd) {
  std::vector<unsigned char> buffer(std::max<std::size_t>({plan_.request_size, plan_.response_size, 1}));
  for (;;) {
    std::size_t got = 0;
    while (got < plan_.request_size) {
      if (!wait_for(fd, POLLIN)) return;
      const ssize_t n = ::recv(fd, buffer.data() + got, plan_.request_size - got, MSG_DONTWAIT);
      if (n == 0) return;  // the end of the test
      if (n < 0) {
        if (nb::transient_errno(errno)) continue;
        counts_.error = failure("recv");
        return;
      }
      ++counts_.recv_calls;
      got += static_cast<std::size_t>(n);
      counts_.bytes_received += static_cast<std::uint64_t>(n);
    }
    std::size_t put = 0;
    while (put < plan_.response_size) {
      if (!wait_for(fd, POLLOUT)) return;
      const ssize_t n = ::send(fd, buffer.data() + put, plan_.response_size - put, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0) {
        if (nb::transient_errno(errno)) continue;
        if (errno == EPIPE || errno == ECONNRESET) return;
        counts_.error = failure("send");
        return;
      }
      ++counts_.send_calls;
      put += static_cast<std::size_t>(n);
      counts_.bytes_sent += static_cast<std::uint64_t>(n);
    }
    ++counts_.transactions;
  }
}

}  // namespace nb::serve
