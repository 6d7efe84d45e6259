// core/tcp_send: the bytes a TCP sender hands over, by sendfile() or send(), and a hung-up peer.
#include "core/tcp_send.hpp"

#include <catch2/catch.hpp>
#include <sys/socket.h>

#include <cerrno>
#include <string>
#include <thread>

namespace {

struct socket_pair {
  nb::fd_handle a, b;
  socket_pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    a.reset(fds[0]);
    b.reset(fds[1]);
  }
};

// Sends `messages` whole messages through `source` on one end while the other end reads them all.
// (Catch's assertions stay on the test's own thread.)
std::string send_and_read(nb::tcp_message_source& source, int messages) {
  socket_pair p;
  int failed = 0;
  std::thread writer([&] {
    for (int m = 0; m < messages && !failed; ++m)
      for (std::size_t offset = 0; offset < source.size() && !failed;) {
        const ssize_t r = source.send(p.a.get(), offset, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) failed = r < 0 ? errno : -1;
        else offset += static_cast<std::size_t>(r);
      }
    ::shutdown(p.a.get(), SHUT_WR);
  });
  std::string got, chunk(1 << 16, '\0');
  for (ssize_t r; (r = ::read(p.b.get(), chunk.data(), chunk.size())) > 0;) got.append(chunk, 0, static_cast<std::size_t>(r));
  writer.join();
  CHECK(failed == 0);
  return got;
}

}  // namespace

TEST_CASE("a TCP message source hands over exactly its message's bytes, by either call", "[unit][tcp_send]") {
  const std::size_t size = GENERATE(1u, 4096u, 100'000u);  // one byte, a page, a message ending mid-page
  SECTION("sendfile() from a memory file (the default)") {
    nb::tcp_message_source source(size, nb::tcp_send_call::sendfile);
    CHECK(source.uses_sendfile());
    CHECK(source.words() == "sendfile");
    CHECK(send_and_read(source, 3) == std::string(3 * size, 0x5a));
  }
  SECTION("send() from a buffer") {
    nb::tcp_message_source source(size, nb::tcp_send_call::copy);
    CHECK_FALSE(source.uses_sendfile());
    CHECK(source.words() == "send");
    CHECK(send_and_read(source, 3) == std::string(3 * size, 0x5a));
  }
}

TEST_CASE("a hung-up peer is EPIPE for a sender thread, not a SIGPIPE that ends the program", "[unit][tcp_send]") {
  const auto call = GENERATE(nb::tcp_send_call::sendfile, nb::tcp_send_call::copy);
  nb::tcp_message_source source(4096, call);
  socket_pair p;
  p.b.reset();
  int error = 0;
  std::thread sender([&] {
    nb::block_sigpipe_in_this_thread();
    if (source.send(p.a.get(), 0, 0) < 0) error = errno;
  });
  sender.join();
  CHECK(error == EPIPE);
}
