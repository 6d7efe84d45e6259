#pragma once
// A deadline on every read and write: a silent peer costs a timer, never a stuck session.
#include "core/sys/socket.hpp"
#include "core/wire/native/auth.hpp"
#include "core/wire/native/protocol.hpp"

#include <fmt/format.h>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>

namespace nb {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// No overload without a frame_mac, which a keyed connection needs. Throws protocol_error for a bad frame or
// a deadline. `max_size`: smaller for a peer not yet trusted.
asio::awaitable<message> read_message(tcp::socket& socket, frame_mac& mac, std::chrono::steady_clock::duration timeout,
                                      std::size_t max_size = max_frame_size);
asio::awaitable<void> write_frame(tcp::socket& socket, std::string frame, std::chrono::steady_clock::duration timeout);
// Call sites keep messages in named variables: GCC 12 destroys some temporaries that live across a
// co_await twice.
inline asio::awaitable<void> write_message(tcp::socket& socket, frame_mac& mac, const message& m,
                                           std::chrono::steady_clock::duration timeout = std::chrono::seconds(10)) {
  return write_frame(socket, encode_frame(m, mac), timeout);
}

// For a peer that speaks another protocol.
asio::awaitable<void> read_exact(tcp::socket& socket, asio::mutable_buffer buffer,
                                 std::chrono::steady_clock::duration timeout, const char* what);
// The peeks leave the bytes in the socket.
asio::awaitable<unsigned char> peek_byte(tcp::socket& socket, std::chrono::steady_clock::duration timeout);

asio::awaitable<void> peek_exact(tcp::socket& socket, asio::mutable_buffer buffer,
                                 std::chrono::steady_clock::duration timeout, const char* what);

asio::awaitable<void> sleep_for(std::chrono::steady_clock::duration d);

// Blocking again, for the data-plane loops.
fd_handle release_blocking(tcp::socket& socket);

asio::awaitable<frame_mac> require_auth(tcp::socket& socket, const std::string& psk,
                                        std::chrono::steady_clock::duration timeout);
// No challenge within `timeout`: the server runs without a key.
asio::awaitable<frame_mac> answer_challenge(tcp::socket& socket, const std::string& psk,
                                            std::chrono::steady_clock::duration timeout);

// A peer's error message becomes a protocol_error.
template <class T>
asio::awaitable<T> expect_message(tcp::socket& socket, frame_mac& mac, std::chrono::steady_clock::duration timeout) {
  message m = co_await read_message(socket, mac, timeout);
  if (auto* e = std::get_if<error_msg>(&m)) throw protocol_error(e->reason);
  if (std::holds_alternative<challenge_msg>(m))  // only a keyed netserve sends one
    throw protocol_error("the server requires a key: give netload --psk-file");
  if (auto* t = std::get_if<T>(&m)) co_return std::move(*t);
  throw protocol_error(fmt::format("expected a '{}' message, got '{}'", message_type(message{T{}}), message_type(m)));
}

}  // namespace nb
