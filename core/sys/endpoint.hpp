#pragma once
// A socket address that is a value: comparable, printable, parseable ("1.2.3.4:80", "[::1]:80").
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
  // Resolves a host name or numeric address (getaddrinfo, as nsswitch.conf says); in the static build
  // (NETBENCH_STATIC) resolve_without_nss. Throws std::runtime_error.
  static endpoint resolve(const std::string& host, std::uint16_t port, int family = AF_UNSPEC);
  // A numeric address, else the first address `hosts_file` gives the name, else an error that says so.
  // Static glibc's getaddrinfo follows the host's nsswitch.conf and loads every module listed there but
  // "files" and "dns" (myhostname, mdns4_minimal, resolve, sss, ...) from the host's own glibc, a second C
  // library in the process: the static build resolves this way instead. Throws std::runtime_error.
  static endpoint resolve_without_nss(const std::string& host, std::uint16_t port, int family,
                                      const std::string& hosts_file = "/etc/hosts");
  // The first address of `family` (AF_UNSPEC: either) that a hosts(5) file gives `name` (canonical name or
  // alias, any case), in file order; none when no line names it or the file cannot be read.
  static std::optional<endpoint> from_hosts_file(std::string_view name, std::uint16_t port, int family,
                                                 const std::string& path);

  // Local and peer addresses of a socket; throw fmt::system_error (peer_of: ENOTCONN when it has none).
  static endpoint local_of(int fd);
  static endpoint peer_of(int fd);

  int family() const noexcept { return storage_.ss_family; }
  std::uint16_t port() const noexcept;
  void set_port(std::uint16_t port) noexcept;
  std::string address() const;    // without port
  std::string to_string() const;  // with port, v6 in brackets
  bool is_loopback() const noexcept;
  // An IPv4 address an IPv6 socket shows as ::ffff:a.b.c.d is given back as the IPv4 endpoint it is;
  // any other endpoint as it is.
  endpoint unmapped() const noexcept;

  const sockaddr* data() const noexcept { return reinterpret_cast<const sockaddr*>(&storage_); }
  sockaddr* data() noexcept { return reinterpret_cast<sockaddr*>(&storage_); }
  socklen_t size() const noexcept;

  // Same address and port; for attributing datagrams to tests (hot path: no allocation).
  bool same(const sockaddr* sa) const noexcept;
  friend bool operator==(const endpoint& a, const endpoint& b) noexcept { return a.same(b.data()); }

 private:
  sockaddr_storage storage_{};
};

}  // namespace nb
