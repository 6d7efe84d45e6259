#pragma once
// Reading and writing control frames on an Asio TCP socket, from coroutines, with a deadline on every
// read and write: a peer that sends nothing, or too slowly, costs a timer, never a stuck session.
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

// Every call names the connection's frame_mac (core/wire/native/auth.hpp): an unkeyed one (no key, or the handshake
// itself) reads and writes plain frames; a keyed one seals what is written and refuses what is read
// without a valid tag, before parsing it. There is no overload without it: a call that forgot it would
// read unauthenticated frames on a keyed connection.
//
// Throws protocol_error for a malformed frame or message, and for a deadline that passed (the error
// says "timed out ..."); boost::system::system_error when the connection fails or closes.
// `max_size` below the protocol's cap: where only a small message may come (a peer not yet trusted).
asio::awaitable<message> read_message(tcp::socket& socket, frame_mac& mac, std::chrono::steady_clock::duration timeout,
                                      std::size_t max_size = max_frame_size);
asio::awaitable<void> write_frame(tcp::socket& socket, std::string frame, std::chrono::steady_clock::duration timeout);
// Encodes (and seals) now and returns the write. Call sites keep messages in named variables: GCC 12
// destroys some temporaries that live across a co_await twice.
inline asio::awaitable<void> write_message(tcp::socket& socket, frame_mac& mac, const message& m,
                                           std::chrono::steady_clock::duration timeout = std::chrono::seconds(10)) {
  return write_frame(socket, encode_frame(m, mac), timeout);
}

// Raw bytes, for a peer that speaks another protocol (netserve/iperf3/iperf3_session.hpp): reads exactly the
// buffer's size, or throws as read_message ("timed out ... `what`").
asio::awaitable<void> read_exact(tcp::socket& socket, asio::mutable_buffer buffer,
                                 std::chrono::steady_clock::duration timeout, const char* what);
// The first byte the peer sent, left in the socket for the next read; throws as read_message.
asio::awaitable<unsigned char> peek_byte(tcp::socket& socket, std::chrono::steady_clock::duration timeout);

// The first buffer.size() bytes the peer sent, left in the socket; throws as read_exact.
asio::awaitable<void> peek_exact(tcp::socket& socket, asio::mutable_buffer buffer,
                                 std::chrono::steady_clock::duration timeout, const char* what);

// A coroutine pause on a timer (polling loops in the control plane: drains, data-plane completion).
asio::awaitable<void> sleep_for(std::chrono::steady_clock::duration d);

// Hands a connected socket over to the data plane: its descriptor, back in blocking mode (the data-plane
// loops use blocking calls with timeouts; Asio may have made it non-blocking). Throws
// boost::system::system_error, as every Asio call here does.
fd_handle release_blocking(tcp::socket& socket);

// Server side of the key check (core/wire/native/auth.hpp): sends a fresh challenge, requires the right answer as the
// peer's first message, confirms; returns the connection's keyed frame_mac. Throws protocol_error saying
// what was wrong.
asio::awaitable<frame_mac> require_auth(tcp::socket& socket, const std::string& psk,
                                        std::chrono::steady_clock::duration timeout);
// Client side: reads the server's challenge, answers it with `psk` and checks the server's confirm;
// returns the keyed frame_mac. Throws protocol_error when the server asks for nothing within `timeout`
// (it runs without a key), refuses the answer, or cannot prove it holds the key.
asio::awaitable<frame_mac> answer_challenge(tcp::socket& socket, const std::string& psk,
                                            std::chrono::steady_clock::duration timeout);

// Reads a message and requires it to be of type T; an error message from the peer becomes a
// protocol_error carrying the peer's reason.
template <class T>
asio::awaitable<T> expect_message(tcp::socket& socket, frame_mac& mac, std::chrono::steady_clock::duration timeout) {
  message m = co_await read_message(socket, mac, timeout);
  if (auto* e = std::get_if<error_msg>(&m)) throw protocol_error(e->reason);
  if (std::holds_alternative<challenge_msg>(m))  // only a keyed netserve sends one, first thing
    throw protocol_error("the server requires a key: give netload --psk-file");
  if (auto* t = std::get_if<T>(&m)) co_return std::move(*t);
  throw protocol_error(fmt::format("expected a '{}' message, got '{}'", message_type(message{T{}}), message_type(m)));
}

}  // namespace nb
