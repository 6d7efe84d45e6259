// core/data/tcp_send: the bytes a TCP sender hands over, by sendfile() or send(), and a hung-up peer.
#include "core/data/tcp_send.hpp"

#include "core/base/units.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
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
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;  // as run_tcp_sender: a full socket, try again
        if (r <= 0) failed = r < 0 ? errno : -1;
        else offset += static_cast<std::size_t>(r);
      }
    ::shutdown(p.a.get(), SHUT_WR);
  });
  std::string got, chunk(1 << 16, '\0');
  for (ssize_t r; (r = ::read(p.b.get(), chunk.data(), chunk.size())) > 0;)
    got.append(chunk, 0, static_cast<std::size_t>(r));
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

namespace {

// A TCP connection over 127.0.0.1 with small buffers, the sender's end with the stream threads' 100-ms send
// timeout (core/data/streams.cpp), and a reader that takes 16 KiB every 10 ms (about 13 Mbit/s): a slow path.
struct slow_tcp_path {
  nb::fd_handle tx, rx;
  std::atomic<bool> hurry{false};
  std::thread reader;
  slow_tcp_path() {
    nb::fd_handle listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(listener);
    const int small = 16 << 10;
    REQUIRE(::setsockopt(listener.get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small) == 0);  // accepted inherit it
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener.get(), 1) == 0);
    REQUIRE(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
    tx.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const int sndbuf = 64 << 10;
    REQUIRE(::setsockopt(tx.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) == 0);
    REQUIRE(::connect(tx.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    rx.reset(::accept(listener.get(), nullptr, nullptr));
    REQUIRE(rx);
    const timeval timeout{0, 100'000};
    REQUIRE(::setsockopt(tx.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) == 0);
    reader = std::thread([this] {
      std::string chunk(16 << 10, '\0');
      while (::read(rx.get(), chunk.data(), chunk.size()) > 0)
        if (!hurry) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    });
  }
  ~slow_tcp_path() {
    hurry = true;
    ::shutdown(tx.get(), SHUT_RDWR);
    reader.join();
  }
};

}  // namespace

// sendfile() gives every 64 KiB it moves a fresh SO_SNDTIMEO: on a blocking socket one call of a large message
// ran until the whole message was out (here 4 MiB at 13 Mbit/s, 2.6 s), deaf to the sender's stop token and its
// end, and netserve joins its streams on its one control thread. A call must return within about the send
// timeout, as send()'s does.
TEST_CASE("on a slow path one send of a large message returns within the send timeout, by either call",
          "[unit][tcp_send]") {
  const auto call = GENERATE(nb::tcp_send_call::sendfile, nb::tcp_send_call::copy);
  nb::tcp_message_source source(4u << 20, call);
  slow_tcp_path path;
  std::size_t offset = 0;
  std::chrono::steady_clock::duration longest{};
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(600);
  while (std::chrono::steady_clock::now() < give_up && offset < source.size()) {
    const auto before = std::chrono::steady_clock::now();
    const ssize_t r = source.send(path.tx.get(), offset, 0);
    longest = std::max(longest, std::chrono::steady_clock::now() - before);
    if (r > 0) offset += static_cast<std::size_t>(r);
    else REQUIRE((errno == EAGAIN || errno == EINTR));
  }
  INFO("longest call " << std::chrono::duration_cast<std::chrono::milliseconds>(longest).count() << " ms, " << offset
                       << " bytes sent");
  CHECK(offset > 0);
  CHECK(longest < std::chrono::milliseconds(400));
}

// A socket pair with room for a whole message: only a call's own limit stops a send.
struct roomy_pair : socket_pair {
  roomy_pair() {
    const int big = 4 << 20;
    REQUIRE(::setsockopt(a.get(), SOL_SOCKET, SO_SNDBUF, &big, sizeof big) == 0);
    REQUIRE(::setsockopt(b.get(), SOL_SOCKET, SO_RCVBUF, &big, sizeof big) == 0);
  }
};

// Under bbr a longer sendfile()'s corked pieces cost pacing timers (core/data/tcp_send.hpp).
TEST_CASE("under bbr sendfile() is asked for one pipe-full at a time, a resumed message up to the next boundary",
          "[unit][tcp_send]") {
  const std::size_t pipe = nb::sendfile_pipe_bytes();
  CHECK(nb::sendfile_piece_for("bbr") == nb::tcp_sendfile_piece::one_pipe);
  CHECK(nb::sendfile_piece_for("cubic") == nb::tcp_sendfile_piece::whole_message);
  CHECK(nb::sendfile_piece_for("reno") == nb::tcp_sendfile_piece::whole_message);
  const std::size_t size = 3 * pipe + 1000;
  SECTION("one pipe-full per call") {
    nb::tcp_message_source source(size, nb::tcp_send_call::sendfile, nb::tcp_sendfile_piece::one_pipe);
    REQUIRE(source.uses_sendfile());
    CHECK(source.words() == "sendfile, " + nb::format_size(pipe) + " per call");
    roomy_pair p;
    CHECK(source.send(p.a.get(), 0, 0) == static_cast<ssize_t>(pipe));
    CHECK(source.send(p.a.get(), 1000, 0) == static_cast<ssize_t>(pipe - 1000));
    CHECK(source.send(p.a.get(), 3 * pipe, 0) == 1000);
    CHECK(send_and_read(source, 2) == std::string(2 * size, 0x5a));
  }
  SECTION("a message of one pipe-full or less is one call, said plainly") {
    nb::tcp_message_source source(pipe, nb::tcp_send_call::sendfile, nb::tcp_sendfile_piece::one_pipe);
    CHECK(source.words() == "sendfile");
    roomy_pair p;
    CHECK(source.send(p.a.get(), 0, 0) == static_cast<ssize_t>(pipe));
  }
  SECTION("elsewhere one call asks for the rest of the message") {
    nb::tcp_message_source source(size, nb::tcp_send_call::sendfile);
    CHECK(source.words() == "sendfile");
    roomy_pair p;
    CHECK(source.send(p.a.get(), 0, 0) > static_cast<ssize_t>(pipe));
  }
}
