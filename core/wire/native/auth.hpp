#pragma once
// Optional pre-shared-key authentication of control and data connections (netserve --psk-file, netload
// --psk-file). Without a key neither side sends anything extra.
//
// Handshake, on every connection a keyed netserve accepts, before anything else (frames in the clear):
//   netserve -> challenge {nonce_s}
//   netload  -> auth {nonce_c, answer = HMAC(psk, "client" | nonce_s | nonce_c)}
//   netserve -> confirm {answer = HMAC(psk, "server" | nonce_s | nonce_c)}
// Both then hold the session key K = HMAC(psk, "session key" | nonce_s | nonce_c), which never crosses
// the wire. Every later frame, both ways, carries tag = HMAC(K, direction | sequence | payload), checked
// before its payload is parsed. A relay that passes the challenge to a key holder and its answer back has
// a connection it cannot send a single frame on; the sequence numbers refuse a replayed, dropped-then-
// resent or reordered frame, the direction a frame reflected back to its sender, and the confirm tells
// netload that the server holds the key too. A TCP data connection runs the same handshake, then names its
// test with a token only the test's client can compute: HMAC(K of the test's control connection, "data" |
// this connection's nonces | stream | cookie); the cookie alone, readable on the wire, admits nothing.
//
// The primitives are OpenSSL's (libcrypto): HMAC-SHA256, RAND_bytes, CRYPTO_memcmp.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace nb {

using sha256_digest = std::array<std::uint8_t, 32>;

sha256_digest hmac_sha256(std::string_view key, std::string_view data);

// Lower-case hex of bytes.
std::string to_hex(std::string_view bytes);
std::string to_hex(const sha256_digest& d);

// `n` bytes from OpenSSL's CSPRNG; throws std::runtime_error on failure.
std::string random_bytes(std::size_t n);

// Compares in time that depends only on the lengths, so a wrong answer reveals nothing of the right one.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

// A key file: its first line, without the line end and trailing blanks (a text key: `openssl rand
// -hex 32`). Throws naming the file: fmt::system_error when it cannot be read, std::runtime_error when
// the line is empty or others (not owner, not group) may read or write it, as ssh refuses a private key.
std::string read_psk_file(const std::string& path);

inline constexpr std::size_t nonce_hex_size = 64;
// A fresh nonce: 32 random bytes, hex.
std::string make_nonce();
// True for what make_nonce() makes: a peer's nonce of another form is refused, so the answers are no
// signing service for arbitrary text.
bool is_nonce(std::string_view s) noexcept;

// The handshake's values (hex answers; the key raw), from the key and both nonces.
std::string client_answer(std::string_view psk, std::string_view nonce_s, std::string_view nonce_c);
std::string server_answer(std::string_view psk, std::string_view nonce_s, std::string_view nonce_c);
std::string session_key(std::string_view psk, std::string_view nonce_s, std::string_view nonce_c);

// The MAC state of one connection after the handshake. Default-constructed: no key, frames go unsealed
// (a netserve without a key, and the handshake itself).
class frame_mac {
 public:
  enum class role { client, server };
  static constexpr std::size_t tag_size = 32;

  frame_mac() = default;
  frame_mac(std::string key, role self, std::string nonces)
      : key_(std::move(key)), self_(self), nonces_(std::move(nonces)) {}

  bool keyed() const noexcept { return !key_.empty(); }
  // The tag of the next frame this side sends (raw bytes); counts it.
  std::string seal(std::string_view payload);
  // Checks the tag of the next frame from the peer; throws protocol_error when it does not match, and
  // counts the frame only when it does.
  void check(std::string_view payload, std::string_view tag);

  const std::string& key() const noexcept { return key_; }
  // Both nonces of this connection's handshake (nonce_s then nonce_c).
  const std::string& nonces() const noexcept { return nonces_; }

 private:
  std::string tag(role sender, std::uint64_t sequence, std::string_view payload) const;

  std::string key_;
  role self_ = role::client;
  std::string nonces_;
  std::uint64_t sent_ = 0, received_ = 0;
};

// The token a TCP data connection (`conn`, after its handshake) presents for stream `stream` of the test
// whose control connection holds `test_key`. Hex.
std::string data_token(std::string_view test_key, const frame_mac& conn, std::string_view cookie, std::uint32_t stream);

}  // namespace nb
