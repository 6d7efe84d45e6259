#include "core/wire/native/auth.hpp"

#include "core/base/fd.hpp"
#include "core/wire/native/protocol.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <cerrno>
#include <stdexcept>

namespace nb {

namespace {

// A static libcrypto must not read the host's openssl.cnf, which may load the host OpenSSL's modules; the
// first initialisation decides.
void init_crypto() {
#ifdef NETBENCH_STATIC
  static const int once = OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr);
  (void)once;
#endif
}

}  // namespace

sha256_digest hmac_sha256(std::string_view key, std::string_view data) {
  init_crypto();
  sha256_digest out;
  unsigned int size = 0;
  // One-shot HMAC() is not deprecated in OpenSSL 3, unlike HMAC_CTX.
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
            data.size(), out.data(), &size) ||
      size != out.size())
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
  return out;
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
  init_crypto();
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("no random bytes: OpenSSL's generator failed");
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string read_psk_file(const std::string& path) {
  // fstat on the descriptor read: the file cannot be swapped in between.
  const fd_handle fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw fmt::system_error(errno, "key file {}", path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw fmt::system_error(errno, "key file {}", path);
  std::string text(4096, '\0');
  const ssize_t n = ::read(fd.get(), text.data(), text.size());
  if (n < 0) throw fmt::system_error(errno, "key file {}", path);
  // Group bits are allowed: systemd's LoadCredential ACL mask shows as group permission.
  if (st.st_mode & S_IRWXO)
    throw std::runtime_error(
        fmt::format("key file {}: others may read or write it (mode {:04o}); chmod o= it", path, st.st_mode & 07777));
  text.resize(static_cast<std::size_t>(n));
  std::string key = text.substr(0, text.find('\n'));
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ' || key.back() == '\t')) key.pop_back();
  if (key.empty()) throw std::runtime_error(fmt::format("key file {}: the first line is empty", path));
  return key;
}

std::string make_nonce() { return to_hex(random_bytes(nonce_hex_size / 2)); }

bool is_nonce(std::string_view s) noexcept {
  return s.size() == nonce_hex_size && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

namespace {

std::string digest_bytes(const sha256_digest& d) { return std::string(d.begin(), d.end()); }

// A label each, so that no derived value can stand in for another; fixed-size nonces keep it unambiguous.
sha256_digest derive(std::string_view psk, std::string_view label, std::string_view nonce_s, std::string_view nonce_c) {
  return hmac_sha256(psk, fmt::format("netbench v3 {}\n{}{}", label, nonce_s, nonce_c));
}

}  // namespace

std::string client_answer(std::string_view psk, std::string_view nonce_s, std::string_view nonce_c) {
  return to_hex(derive(psk, "client answer", nonce_s, nonce_c));
}

std::string server_answer(std::string_view psk, std::string_view nonce_s, std::string_view nonce_c) {
  return to_hex(derive(psk, "server answer", nonce_s, nonce_c));
}

std::string session_key(std::string_view psk, std::string_view nonce_s, std::string_view nonce_c) {
  return digest_bytes(derive(psk, "session key", nonce_s, nonce_c));
}

std::string frame_mac::tag(role sender, std::uint64_t sequence, std::string_view payload) const {
  std::string input;
  input.reserve(9 + payload.size());
  input += sender == role::client ? 'C' : 'S';
  for (int i = 7; i >= 0; --i) input += static_cast<char>(sequence >> (8 * i));
  input.append(payload);
  return digest_bytes(hmac_sha256(key_, input));
}

std::string frame_mac::seal(std::string_view payload) { return tag(self_, sent_++, payload); }

void frame_mac::check(std::string_view payload, std::string_view t) {
  const role peer = self_ == role::client ? role::server : role::client;
  if (!constant_time_equal(t, tag(peer, received_, payload)))
    throw protocol_error(
        "a control message failed its authentication check (altered, replayed, reordered, or not from the key holder)");
  ++received_;
}

std::string data_token(std::string_view test_key, const frame_mac& conn, std::string_view cookie,
                       std::uint32_t stream) {
  return to_hex(hmac_sha256(test_key, fmt::format("netbench v3 data\n{}{}\n{}", conn.nonces(), stream, cookie)));
}

}  // namespace nb
