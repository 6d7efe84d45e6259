#include "core/sys/endpoint.hpp"

#include "core/base/whole_number.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nb {

endpoint::endpoint(const sockaddr* sa, socklen_t len) {
  std::memcpy(&storage_, sa, std::min<std::size_t>(len, sizeof storage_));
}

endpoint endpoint::from_numeric(std::string_view address, std::uint16_t port) {
  std::string a(address);
  endpoint e;
  if (!a.empty() && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&e.storage_);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&e.storage_);
  if (::inet_pton(AF_INET, a.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
  } else if (::inet_pton(AF_INET6, a.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
  } else {
    throw std::invalid_argument(fmt::format("'{}' is not a numeric IPv4 or IPv6 address", address));
  }
  e.set_port(port);
  return e;
}

endpoint endpoint::parse(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos) throw std::invalid_argument(fmt::format("'{}' has no port", text));
  const auto port = parse_whole<std::uint16_t>(text.substr(colon + 1));
  if (!port) throw std::invalid_argument(fmt::format("'{}' has a bad port", text));
  return from_numeric(text.substr(0, colon), *port);
}

endpoint endpoint::resolve(const std::string& host, std::uint16_t port, int family) {
#ifdef NETBENCH_STATIC
  // No getaddrinfo at all: no NSS code that could load a foreign libnss_*.
  return resolve_without_nss(host, port, family);
#else
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &list); rc != 0)
    throw std::runtime_error(fmt::format("cannot resolve '{}': {}", host, ::gai_strerror(rc)));
  endpoint e(list->ai_addr, list->ai_addrlen);
  ::freeaddrinfo(list);
  e.set_port(port);
  return e;
#endif
}

endpoint endpoint::resolve_without_nss(const std::string& host, std::uint16_t port, int family,
                                       const std::string& hosts_file) {
  std::optional<endpoint> found;
  try {
    found = from_numeric(host, port);
  } catch (const std::invalid_argument&) {
    found = from_hosts_file(host, port, family, hosts_file);
    if (!found)
      throw std::runtime_error(
          fmt::format("cannot resolve '{}': the static build reads only {}; give a numeric address", host, hosts_file));
  }
  if (family != AF_UNSPEC && found->family() != family)
    throw std::runtime_error(
        fmt::format("cannot resolve '{}': not an {} address", host, family == AF_INET ? "IPv4" : "IPv6"));
  return *found;
}

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

}  // namespace

std::optional<endpoint> endpoint::from_hosts_file(std::string_view name, std::uint16_t port, int family,
                                                  const std::string& path) {
  if (name.empty()) return std::nullopt;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    line.resize(std::min(line.find('#'), line.size()));
    std::istringstream fields(line);  // a CRLF file's '\r' too
    std::string address, alias;
    if (!(fields >> address) || address.front() == '[') continue;
    bool named = false;
    while (!named && fields >> alias) named = same_name(alias, name);
    if (!named) continue;
    try {
      endpoint e = from_numeric(address, port);
      if (family == AF_UNSPEC || e.family() == family) return e;
    } catch (const std::invalid_argument&) {
      // As glibc's reader: a line whose address is not numeric names nothing.
    }
  }
  return std::nullopt;
}

endpoint endpoint::local_of(int fd) {
  endpoint e;
  socklen_t len = sizeof e.storage_;
  if (::getsockname(fd, e.data(), &len) != 0) throw fmt::system_error(errno, "getsockname");
  return e;
}

endpoint endpoint::peer_of(int fd) {
  endpoint e;
  socklen_t len = sizeof e.storage_;
  if (::getpeername(fd, e.data(), &len) != 0) throw fmt::system_error(errno, "getpeername");
  return e;
}

std::uint16_t endpoint::port() const noexcept {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  return 0;
}

void endpoint::set_port(std::uint16_t port) noexcept {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage_)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_port = htons(port);
}

socklen_t endpoint::size() const noexcept { return family() == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in); }

std::string endpoint::address() const {
  // inet_ntop fails only for another family: an empty endpoint's address is "".
  char buf[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, buf, sizeof buf);
  else if (family() == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, buf, sizeof buf);
  return buf;
}

std::string endpoint::to_string() const {
  return family() == AF_INET6 ? fmt::format("[{}]:{}", address(), port()) : fmt::format("{}:{}", address(), port());
}

bool endpoint::is_loopback() const noexcept {
  if (family() == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr) >> 24) == 127;
  if (family() == AF_INET6) return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
  return false;
}

endpoint endpoint::unmapped() const noexcept {
  if (family() != AF_INET6) return *this;
  auto* a = reinterpret_cast<const sockaddr_in6*>(&storage_);
  if (!IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) return *this;
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = a->sin6_port;
  std::memcpy(&v4.sin_addr, &a->sin6_addr.s6_addr[12], sizeof v4.sin_addr);
  return endpoint(reinterpret_cast<const sockaddr*>(&v4), sizeof v4);
}

bool endpoint::same(const sockaddr* sa) const noexcept {
  if (sa->sa_family != family()) return false;
  if (family() == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&storage_);
    auto* b = reinterpret_cast<const sockaddr_in*>(sa);
    return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
  }
  auto* a = reinterpret_cast<const sockaddr_in6*>(&storage_);
  auto* b = reinterpret_cast<const sockaddr_in6*>(sa);
  return a->sin6_port == b->sin6_port && std::memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
}

}  // namespace nb
