#pragma once
// The optional pre-shared-key check of control and data connections (docs/control-protocol.md#the-key-check).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace nb {

using sha256_digest = std::array<std::uint8_t, 32>;

sha256_digest hmac_sha256(std::string_view key, std::string_view data);

std::string to_hex(std::string_view bytes);
std::string to_hex(const sha256_digest& d);

std::string random_bytes(std::size_t n);

// Time depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

// Refused when others may read or write it, as ssh refuses a private key.
std::string read_psk_file(const std::string& path);

inline constexpr std::size_t nonce_hex_size = 64;
std::string make_nonce();
// A peer's nonce must be of this form, else the answers would sign arbitrary text.
bool is_nonce(std::string_view s) noexcept;

// Hex answers; the key raw.
std::string client_answer(std::string_view psk, std::string_view nonce_s, std::string_view nonce_c);
std::string server_answer(std::string_view psk, std::string_view nonce_s, std::string_view nonce_c);
std::string session_key(std::string_view psk, std::string_view nonce_s, std::string_view nonce_c);

// Default-constructed: frames go unsealed (no key, or the handshake itself).
class frame_mac {
 public:
  enum class role { client, server };
  static constexpr std::size_t tag_size = 32;

  frame_mac() = default;
  frame_mac(std::string key, role self, std::string nonces)
      : key_(std::move(key)), self_(self), nonces_(std::move(nonces)) {}

  bool keyed() const noexcept { return !key_.empty(); }
  std::string seal(std::string_view payload);
  // Counts the frame only when it matches.
  void check(std::string_view payload, std::string_view tag);

  const std::string& key() const noexcept { return key_; }
  // nonce_s then nonce_c.
  const std::string& nonces() const noexcept { return nonces_; }

 private:
  std::string tag(role sender, std::uint64_t sequence, std::string_view payload) const;

  std::string key_;
  role self_ = role::client;
  std::string nonces_;
  std::uint64_t sent_ = 0, received_ = 0;
};

// `test_key`: the key of the test's control connection; `conn`: the data connection's own.
std::string data_token(std::string_view test_key, const frame_mac& conn, std::string_view cookie, std::uint32_t stream);

}  // namespace nb
