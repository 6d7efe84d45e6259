#pragma once
// Raw TCP to a netserve on 127.0.0.1, for tests that send what netload never would.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <string>

namespace nb::test {

// A TCP connection to 127.0.0.1:port, from `source` when given (another loopback address is another
// client to netserve's budget).
inline int connect_to(std::uint16_t port, const char* source = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (source) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &local.sin_addr);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0);
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

// Sends `bytes`, optionally half-closes, then waits until the server closes the connection.
inline void send_and_expect_close(std::uint16_t port, const std::string& bytes, bool half_close) {
  int fd = connect_to(port);
  if (!bytes.empty())
    REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
  if (half_close) ::shutdown(fd, SHUT_WR);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) {
  }
  // Closed by the server (a reset when it left our extra bytes unread), not timed out here.
  CHECK((n == 0 || errno == ECONNRESET));
  ::close(fd);
}

}  // namespace nb::test
