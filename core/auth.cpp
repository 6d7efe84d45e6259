#include "core/auth.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace nb {
namespace {

constexpr std::array<std::uint32_t, 64> round_constants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) noexcept { return (x >> n) | (x << (32 - n)); }

// One 64-byte block into the running state (FIPS 180-4, 6.2.2).
void compress(std::array<std::uint32_t, 8>& h, const std::uint8_t* block) noexcept {
  std::uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = std::uint32_t{block[4 * t]} << 24 | std::uint32_t{block[4 * t + 1]} << 16 |
           std::uint32_t{block[4 * t + 2]} << 8 | std::uint32_t{block[4 * t + 3]};
  for (int t = 16; t < 64; ++t) {
    std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int t = 0; t < 64; ++t) {
    std::uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + round_constants[t] + w[t];
    std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

}  // namespace

sha256_digest sha256(std::string_view data) {
  std::array<std::uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* p = reinterpret_cast<const std::uint8_t*>(data.data());
  std::size_t full = data.size() / 64 * 64;
  for (std::size_t i = 0; i < full; i += 64) compress(h, p + i);
  // The tail, a 1 bit, zeros, and the length in bits: one block, or two when the tail leaves no room.
  std::uint8_t last[128] = {};
  std::size_t tail = data.size() - full;
  std::memcpy(last, p + full, tail);
  last[tail] = 0x80;
  std::size_t blocks = tail + 1 + 8 <= 64 ? 1 : 2;
  std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) last[blocks * 64 - 1 - i] = static_cast<std::uint8_t>(bits >> (8 * i));
  for (std::size_t b = 0; b < blocks; ++b) compress(h, last + 64 * b);
  sha256_digest out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(h[i] >> (24 - 8 * j));
  return out;
}

sha256_digest hmac_sha256(std::string_view key, std::string_view message) {
  std::string k(key);
  if (k.size() > 64) {
    sha256_digest kd = sha256(k);
    k.assign(kd.begin(), kd.end());
  }
  k.resize(64, '\0');
  std::string inner(64, '\0'), outer(64, '\0');
  for (std::size_t i = 0; i < 64; ++i) {
    inner[i] = static_cast<char>(k[i] ^ 0x36);
    outer[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  sha256_digest ih = sha256(inner.append(message));
  return sha256(outer.append(ih.begin(), ih.end()));
}

std::string to_hex(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

std::string to_hex(const sha256_digest& d) {
  return to_hex(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t got = 0; got < n;) {
    ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw std::system_error(errno, std::system_category(), "getrandom");
    got += static_cast<std::size_t>(r);
  }
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string read_psk_file(const std::string& path) {
  // The mode is checked on the descriptor that is read, so the file cannot be swapped in between.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("key file {}: {}", path, std::strerror(errno)));
  struct stat st {};
  std::string text(4096, '\0');
  ssize_t n = ::fstat(fd, &st) == 0 ? ::read(fd, text.data(), text.size()) : -1;
  int err = errno;
  ::close(fd);
  if (n < 0) throw std::runtime_error(fmt::format("key file {}: {}", path, std::strerror(err)));
  // Group bits are allowed: systemd's LoadCredential grants the service user read access with an ACL,
  // whose mask shows as group permission.
  if (st.st_mode & S_IRWXO)
    throw std::runtime_error(fmt::format("key file {}: others may read or write it (mode {:04o}); chmod o= it", path,
                                         st.st_mode & 07777));
  text.resize(static_cast<std::size_t>(n));
  std::string key = text.substr(0, text.find('\n'));
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ' || key.back() == '\t')) key.pop_back();
  if (key.empty()) throw std::runtime_error(fmt::format("key file {}: the first line is empty", path));
  return key;
}

std::string make_nonce() { return to_hex(random_bytes(32)); }

std::string auth_answer(std::string_view psk, std::string_view nonce_hex) {
  // The context string keeps this key's answers from being any other protocol's.
  return to_hex(hmac_sha256(psk, std::string("netbench control auth v1\n").append(nonce_hex)));
}

}  // namespace nb
