#include "core/wire/native/frame_io.hpp"

#include "core/wire/native/auth.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <string>

#include <poll.h>
#include <sys/socket.h>

namespace nb {

using namespace asio::experimental::awaitable_operators;

namespace {

// as_tuple: `||` waits for the first to *succeed*, so a failure must be a value to end the race.
template <class Op>
asio::awaitable<std::size_t> with_deadline(Op op, std::chrono::steady_clock::duration timeout, const char* what) {
  asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
  auto r = co_await (std::move(op) || timer.async_wait(asio::use_awaitable));
  if (r.index() == 1)
    throw protocol_error(
        fmt::format("timed out after {:.1f} s {}", std::chrono::duration<double>(timeout).count(), what));
  auto [ec, n] = std::get<0>(r);
  if (ec) throw boost::system::system_error(ec);
  co_return n;
}

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);

}  // namespace

asio::awaitable<void> read_exact(tcp::socket& socket, asio::mutable_buffer buffer,
                                 std::chrono::steady_clock::duration timeout, const char* what) {
  co_await with_deadline(asio::async_read(socket, buffer, no_throw), timeout, what);
}

asio::awaitable<unsigned char> peek_byte(tcp::socket& socket, std::chrono::steady_clock::duration timeout) {
  unsigned char b = 0;
  const std::size_t n = co_await with_deadline(
      socket.async_receive(asio::buffer(&b, 1), tcp::socket::message_peek, no_throw), timeout, "waiting for a message");
  if (n == 0) throw boost::system::system_error(asio::error::eof);
  co_return b;
}

namespace {

// Back to 1 after the peek: the socket is read on afterwards.
struct receive_low_mark {
  int fd;
  receive_low_mark(int f, std::size_t bytes) : fd(f) {
    const int n = static_cast<int>(bytes);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &n, sizeof n);
  }
  ~receive_low_mark() {
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
  }
  receive_low_mark(const receive_low_mark&) = delete;
  receive_low_mark& operator=(const receive_low_mark&) = delete;
};

bool peer_closed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

}  // namespace

asio::awaitable<void> peek_exact(tcp::socket& socket, asio::mutable_buffer buffer,
                                 std::chrono::steady_clock::duration timeout, const char* what) {
  // With the low mark at the size, a peer that sends a little and stops costs no wakeups.
  const int fd = socket.native_handle();
  const receive_low_mark mark(fd, buffer.size());
  asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
  for (;;) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      throw boost::system::system_error(errno, boost::system::system_category());
    if (n == 0) throw boost::system::system_error(asio::error::eof);
    if (n >= static_cast<ssize_t>(buffer.size())) co_return;
    if (n > 0 && peer_closed(fd)) throw boost::system::system_error(asio::error::eof);
    // Asio re-arms epoll: nothing that came since the peek is missed.
    auto r = co_await (socket.async_wait(tcp::socket::wait_read, no_throw) || timer.async_wait(asio::use_awaitable));
    if (r.index() == 1)
      throw protocol_error(
          fmt::format("timed out after {:.1f} s {}", std::chrono::duration<double>(timeout).count(), what));
    if (auto [ec] = std::get<0>(r); ec) throw boost::system::system_error(ec);
  }
}

asio::awaitable<void> sleep_for(std::chrono::steady_clock::duration d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

fd_handle release_blocking(tcp::socket& socket) {
  socket.native_non_blocking(false);
  return fd_handle(socket.release());
}

asio::awaitable<message> read_message(tcp::socket& socket, frame_mac& mac, std::chrono::steady_clock::duration timeout,
                                      std::size_t max_size) {
  unsigned char header[frame_header_size];
  co_await with_deadline(asio::async_read(socket, asio::buffer(header), no_throw), timeout, "waiting for a message");
  const std::size_t length = decode_frame_length(header);
  if (length > max_size)
    throw protocol_error(fmt::format("frame of {} bytes where at most {} may come", length, max_size));
  std::string body(length, '\0');
  co_await with_deadline(asio::async_read(socket, asio::buffer(body), no_throw), timeout, "reading a message");
  co_return decode_frame_body(body, mac);
}

namespace {
// Enough for a keyless client's request, for the log; no more before the check.
constexpr std::size_t auth_frame_max = 2048;
}  // namespace

asio::awaitable<frame_mac> require_auth(tcp::socket& socket, const std::string& psk,
                                        std::chrono::steady_clock::duration timeout) {
  frame_mac plain;
  const std::string nonce_s = make_nonce();
  const message challenge = challenge_msg{nonce_s};
  co_await write_message(socket, plain, challenge, timeout);
  message m = co_await read_message(socket, plain, timeout, auth_frame_max);
  auto* answer = std::get_if<auth_msg>(&m);
  if (!answer)
    throw protocol_error(
        fmt::format("'{}' before authenticating: this netserve has a key (netload --psk-file)", message_type(m)));
  if (!is_nonce(answer->nonce)) throw protocol_error("the client's nonce is malformed");
  if (!constant_time_equal(answer->answer, client_answer(psk, nonce_s, answer->nonce)))
    throw protocol_error("wrong key: the answer to the challenge does not match");
  const message confirm = confirm_msg{server_answer(psk, nonce_s, answer->nonce)};
  co_await write_message(socket, plain, confirm, timeout);
  co_return frame_mac(session_key(psk, nonce_s, answer->nonce), frame_mac::role::server, nonce_s + answer->nonce);
}

namespace {

asio::awaitable<std::string> read_challenge(tcp::socket& socket, std::chrono::steady_clock::duration timeout) {
  // A keyless server waits silently for a request.
  const std::string no_challenge =
      "the server sent no authentication challenge: it runs without a key (drop --psk-file, or start netserve with one)";
  frame_mac plain;
  message m;
  try {
    m = co_await read_message(socket, plain, timeout, auth_frame_max);
  } catch (const protocol_error& e) {
    throw protocol_error(fmt::format("{} ({})", no_challenge, e.what()));
  } catch (const boost::system::system_error& e) {
    throw protocol_error(fmt::format("{} ({})", no_challenge, e.code().message()));
  }
  if (auto* e = std::get_if<error_msg>(&m))
    throw protocol_error(fmt::format("{} (it said: {})", no_challenge, e->reason));
  auto* challenge = std::get_if<challenge_msg>(&m);
  if (!challenge) throw protocol_error(fmt::format("{} (it sent '{}')", no_challenge, message_type(m)));
  if (!is_nonce(challenge->nonce)) throw protocol_error("the server's challenge is malformed");
  co_return challenge->nonce;
}

}  // namespace

asio::awaitable<frame_mac> answer_challenge(tcp::socket& socket, const std::string& psk,
                                            std::chrono::steady_clock::duration timeout) {
  frame_mac plain;
  const std::string nonce_s = co_await read_challenge(socket, timeout);
  // Our own nonce: a recorded confirm is worth nothing to a server that replays an old challenge.
  const std::string nonce_c = make_nonce();
  const message answer = auth_msg{nonce_c, client_answer(psk, nonce_s, nonce_c)};
  co_await write_message(socket, plain, answer, timeout);
  message m = co_await read_message(socket, plain, timeout, auth_frame_max);
  if (auto* e = std::get_if<error_msg>(&m)) throw protocol_error(e->reason);
  auto* confirm = std::get_if<confirm_msg>(&m);
  if (!confirm) throw protocol_error(fmt::format("expected the server's 'confirm', got '{}'", message_type(m)));
  if (!constant_time_equal(confirm->answer, server_answer(psk, nonce_s, nonce_c)))
    throw protocol_error("the server could not prove it holds the key: its confirm does not match");
  co_return frame_mac(session_key(psk, nonce_s, nonce_c), frame_mac::role::client, nonce_s + nonce_c);
}

asio::awaitable<void> write_frame(tcp::socket& socket, std::string frame, std::chrono::steady_clock::duration timeout) {
  co_await with_deadline(asio::async_write(socket, asio::buffer(frame), no_throw), timeout, "sending a message");
}

}  // namespace nb
