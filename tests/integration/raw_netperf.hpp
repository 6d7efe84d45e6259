#pragma once
// netperf 2.7's control protocol by hand (core/wire/netperf/netperf_wire.hpp), against a netserve on 127.0.0.1 from
// any loopback address: a legitimate client's exchange (request, setup response, data, results), and the
// blocks a hostile one sends. No stock netperf needed.
#include "core/base/clock.hpp"
#include "core/wire/netperf/netperf_wire.hpp"
#include "tests/integration/raw_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace nb::test {

namespace np = nb::netperf;

// A block of `type` with nothing else in it (a passphrase, a request type netserve does not serve).
inline np::block netperf_block(std::int32_t type, std::int32_t value = -1) {
  np::block b{};
  for (int i = 0; i < 4; ++i) {
    b[i] = static_cast<unsigned char>(static_cast<std::uint32_t>(type) >> (24 - 8 * i));
    b[4 + i] = static_cast<unsigned char>(static_cast<std::uint32_t>(value) >> (24 - 8 * i));
  }
  return b;
}

// A request as netperf 2.7 sends it: -t UDP_STREAM / TCP_STREAM (rr = false) or UDP_RR / TCP_RR.
inline np::omni_request netperf_request(bool udp, bool rr, int seconds, int request = 1, int response = 1) {
  np::omni_request r;
  r.protocol = udp ? np::ipproto_udp : np::ipproto_tcp;
  r.socket_type = udp ? np::nst_dgram : np::nst_stream;
  r.direction = rr ? (np::dir_recv | np::dir_xmit) : np::dir_recv;
  r.test_length = seconds;
  r.request_size = rr ? request : 0;
  r.response_size = rr ? response : 0;
  r.send_size = 1400;
  r.receive_size = 0xffffffffU;
  return r;
}

// Sends `b`; false when the connection is gone.
inline bool send_block(int fd, const np::block& b) {
  return ::send(fd, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size());
}

// The next block, or nothing when the connection closed or `ms` passed.
inline std::optional<np::block> read_block(int fd, int ms = 10'000) {
  np::block b{};
  std::size_t got = 0;
  const std::int64_t until = nb::mono_ns() + std::int64_t{ms} * 1'000'000;
  while (got < b.size()) {
    const int left = static_cast<int>((until - nb::mono_ns()) / 1'000'000);
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, left) <= 0) return std::nullopt;
    const ssize_t n = ::recv(fd, b.data() + got, b.size() - got, 0);
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  return b;
}

// Whether netserve closed `fd` (EOF or a reset; blocks it sent before are read and dropped), within `ms`.
inline bool closed_within(int fd, int ms) {
  const std::int64_t until = nb::mono_ns() + std::int64_t{ms} * 1'000'000;
  char buf[4096];
  for (;;) {
    const int left = static_cast<int>((until - nb::mono_ns()) / 1'000'000);
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, left) <= 0) return false;
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
  }
}

// A UDP socket on 127.0.0.1 (any port).
inline int udp_socket_on_loopback() {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

inline void send_datagram(int fd, std::uint16_t port, std::size_t size) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string payload(size, 'x');
  REQUIRE(::sendto(fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
          static_cast<ssize_t>(size));
}

// The setup response to a request sent on `control`: its errno (0: served) and, when served, the data port.
struct netperf_setup {
  std::int32_t errno_value = -1;  // -1: no answer
  std::uint16_t data_port = 0;
};

inline netperf_setup request_test(int control, const np::omni_request& r) {
  netperf_setup out;
  if (!send_block(control, np::encode_request(r))) return out;
  auto answer = read_block(control);
  if (!answer) return out;
  out.errno_value = np::decode_header(*answer).value;
  if (out.errno_value == 0) out.data_port = static_cast<std::uint16_t>(np::decode_setup(*answer).data_port);
  return out;
}

// netperf -t UDP_STREAM -l 1 -- -m 100 from `source`, by hand: what netserve's results say it received
// (bytes), or why the exchange failed.
struct netperf_outcome {
  bool ok = false;
  std::string why;
  std::uint64_t bytes_received = 0;
};

inline netperf_outcome udp_stream_exchange(std::uint16_t port, const char* source, int datagrams) {
  netperf_outcome out;
  const int control = connect_to(port, source);
  const netperf_setup setup = request_test(control, netperf_request(true, false, 1));
  if (setup.errno_value != 0) {
    out.why = setup.errno_value < 0 ? "no setup response (connection reset or closed)"
                                    : "remote error " + std::to_string(setup.errno_value);
    ::close(control);
    return out;
  }
  const int data = udp_socket_on_loopback();
  for (int i = 0; i < datagrams; ++i) send_datagram(data, setup.data_port, 100);
  for (int i = 0; i < 3; ++i) send_datagram(data, setup.data_port, 0);  // netperf's end of a UDP_STREAM test
  ::close(data);
  auto results = read_block(control);
  ::close(control);
  if (!results) {
    out.why = "no results";
    return out;
  }
  out.bytes_received = np::decode_results(*results).bytes_received;
  out.ok = true;
  return out;
}

}  // namespace nb::test
