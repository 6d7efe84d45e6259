#pragma once
// Optional pre-shared-key authentication of control and data connections. netserve started with
// --psk-file sends a fresh random nonce on every connection it accepts; the client proves it knows the
// key with HMAC-SHA256(key, context + nonce) before anything else. The key never crosses the wire and a
// recorded answer is worth nothing for the next nonce. Without a key neither side sends anything extra.
//
// SHA-256 (FIPS 180-4) and HMAC (RFC 2104) are implemented here: the suite's dependencies carry no
// crypto library, and these two are short and checked against the published test vectors.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace nb {

using sha256_digest = std::array<std::uint8_t, 32>;

sha256_digest sha256(std::string_view data);
sha256_digest hmac_sha256(std::string_view key, std::string_view message);

// Lower-case hex of bytes.
std::string to_hex(std::string_view bytes);
std::string to_hex(const sha256_digest& d);

// `n` bytes from the kernel's random source (getrandom); throws std::system_error on failure.
std::string random_bytes(std::size_t n);

// Compares in time that depends only on the lengths, so a wrong answer reveals nothing of the right one.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

// A key file: its first line, without the line end and trailing blanks (a text key: `openssl rand
// -hex 32`). Throws std::runtime_error naming the file when it cannot be read, the line is empty, or
// others (not owner, not group) may read or write it, as ssh refuses a private key.
std::string read_psk_file(const std::string& path);

// The challenge's nonce (hex), and the answer a client holding `psk` gives to it (hex).
std::string make_nonce();
std::string auth_answer(std::string_view psk, std::string_view nonce_hex);

}  // namespace nb
