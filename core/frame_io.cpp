#include "core/frame_io.hpp"

#include "core/auth.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fcntl.h>
#include <fmt/format.h>

#include <string>

namespace nb {

using namespace asio::experimental::awaitable_operators;

namespace {

// Runs `op` (an as_tuple operation, so it never throws) against a timer; the loser is cancelled.
// Throws protocol_error on timeout and system_error when the operation fails: `||` waits for the first
// operation that *succeeds*, so a failure must come back as a value to end the race at once.
template <class Op>
asio::awaitable<std::size_t> with_deadline(Op op, std::chrono::steady_clock::duration timeout, const char* what) {
  asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
  auto r = co_await (std::move(op) || timer.async_wait(asio::use_awaitable));
  if (r.index() == 1)
    throw protocol_error(fmt::format("timed out after {:.1f} s {}",
                                     std::chrono::duration<double>(timeout).count(), what));
  auto [ec, n] = std::get<0>(r);
  if (ec) throw boost::system::system_error(ec);
  co_return n;
}

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);

}  // namespace

asio::awaitable<void> sleep_for(std::chrono::steady_clock::duration d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

fd_handle release_blocking(tcp::socket& socket) {
  fd_handle fd(socket.release());
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

asio::awaitable<message> read_message(tcp::socket& socket, std::chrono::steady_clock::duration timeout,
                                      std::size_t max_size) {
  unsigned char header[frame_header_size];
  co_await with_deadline(asio::async_read(socket, asio::buffer(header), no_throw), timeout,
                         "waiting for a message");
  const std::size_t length = decode_frame_length(header);
  if (length > max_size) throw protocol_error(fmt::format("frame of {} bytes where at most {} may come", length, max_size));
  std::string payload(length, '\0');
  co_await with_deadline(asio::async_read(socket, asio::buffer(payload), no_throw), timeout,
                         "reading a message");
  co_return decode_payload(payload);
}

namespace {
// An answer is ~100 bytes; a request from a client without a key (~1 KB at 64 streams) still fits, so the
// log can say what came instead. A peer not yet trusted gets no more.
constexpr std::size_t auth_frame_max = 2048;
constexpr std::size_t nonce_hex_size = 64;
}  // namespace

asio::awaitable<void> require_auth(tcp::socket& socket, const std::string& psk, std::chrono::steady_clock::duration timeout) {
  const challenge_msg challenge{make_nonce()};
  const message challenge_m = challenge;
  co_await write_message(socket, challenge_m, timeout);
  message m = co_await read_message(socket, timeout, auth_frame_max);
  auto* answer = std::get_if<auth_msg>(&m);
  if (!answer)
    throw protocol_error(fmt::format("'{}' before authenticating: this netserve has a key (netload --psk-file)",
                                     message_type(m)));
  if (!constant_time_equal(answer->answer, auth_answer(psk, challenge.nonce)))
    throw protocol_error("wrong key: the answer to the challenge does not match");
}

asio::awaitable<void> answer_challenge(tcp::socket& socket, const std::string& psk,
                                       std::chrono::steady_clock::duration timeout) {
  // A server without a key sends nothing and waits for a request: whichever side's timer ends the
  // silence first (ours, or the server's, which then closes or says so), it was no challenge.
  const std::string no_challenge =
      "the server sent no authentication challenge: it runs without a key (drop --psk-file, or start netserve with one)";
  message m;
  try {
    m = co_await read_message(socket, timeout, auth_frame_max);
  } catch (const protocol_error& e) {
    throw protocol_error(fmt::format("{} ({})", no_challenge, e.what()));
  } catch (const boost::system::system_error& e) {
    throw protocol_error(fmt::format("{} ({})", no_challenge, e.code().message()));
  }
  if (auto* e = std::get_if<error_msg>(&m)) throw protocol_error(fmt::format("{} (it said: {})", no_challenge, e->reason));
  auto* challenge = std::get_if<challenge_msg>(&m);
  if (!challenge) throw protocol_error(fmt::format("{} (it sent '{}')", no_challenge, message_type(m)));
  // Only a nonce of the expected form is answered: the answer is not a signing service for any text.
  if (challenge->nonce.size() != nonce_hex_size ||
      challenge->nonce.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw protocol_error("the server's challenge is malformed");
  const message answer = auth_msg{auth_answer(psk, challenge->nonce)};
  co_await write_message(socket, answer, timeout);
}

asio::awaitable<void> write_frame(tcp::socket& socket, std::string frame, std::chrono::steady_clock::duration timeout) {
  co_await with_deadline(asio::async_write(socket, asio::buffer(frame), no_throw), timeout,
                         "sending a message");
}

}  // namespace nb
