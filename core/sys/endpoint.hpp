#pragma once
// A socket address as a value: comparable, printable, parseable ("1.2.3.4:80", "[::1]:80").
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nb {

class endpoint {
 public:
  endpoint() = default;
  endpoint(const sockaddr* sa, socklen_t len);

  // Numeric address (no DNS); throws std::invalid_argument.
  static endpoint from_numeric(std::string_view address, std::uint16_t port);
  // "host:port", "[v6]:port"; numeric only. Throws std::invalid_argument.
  static endpoint parse(std::string_view text);
  // getaddrinfo; resolve_without_nss in the static build. Throws std::runtime_error.
  static endpoint resolve(const std::string& host, std::uint16_t port, int family = AF_UNSPEC);
  // Static glibc's getaddrinfo would load the host's NSS modules, a second C library in the process.
  static endpoint resolve_without_nss(const std::string& host, std::uint16_t port, int family,
                                      const std::string& hosts_file = "/etc/hosts");
  // The first address of `family` a hosts(5) file gives `name`, as canonical name or alias.
  static std::optional<endpoint> from_hosts_file(std::string_view name, std::uint16_t port, int family,
                                                 const std::string& path);

  // Throw fmt::system_error.
  static endpoint local_of(int fd);
  static endpoint peer_of(int fd);

  int family() const noexcept { return storage_.ss_family; }
  std::uint16_t port() const noexcept;
  void set_port(std::uint16_t port) noexcept;
  std::string address() const;    // without port
  std::string to_string() const;  // with port, v6 in brackets
  bool is_loopback() const noexcept;
  // ::ffff:a.b.c.d as the IPv4 endpoint it is.
  endpoint unmapped() const noexcept;

  const sockaddr* data() const noexcept { return reinterpret_cast<const sockaddr*>(&storage_); }
  sockaddr* data() noexcept { return reinterpret_cast<sockaddr*>(&storage_); }
  socklen_t size() const noexcept;

  // Hot path: no allocation.
  bool same(const sockaddr* sa) const noexcept;
  friend bool operator==(const endpoint& a, const endpoint& b) noexcept { return a.same(b.data()); }

 private:
  sockaddr_storage storage_{};
};

}  // namespace nb
