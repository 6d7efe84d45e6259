#include "core/sys/egress.hpp"

#include "core/base/fd.hpp"

#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>
#include <sys/ioctl.h>

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

namespace nb {
namespace {

template <class T, void (*Free)(T*)>
struct freer {
  void operator()(T* p) const noexcept { Free(p); }
};
using nl_socket_ptr = std::unique_ptr<nl_sock, freer<nl_sock, nl_socket_free>>;
using nl_addr_ptr = std::unique_ptr<nl_addr, freer<nl_addr, nl_addr_put>>;
using route_ptr = std::unique_ptr<rtnl_route, freer<rtnl_route, rtnl_route_put>>;
using link_ptr = std::unique_ptr<rtnl_link, freer<rtnl_link, rtnl_link_put>>;

bool ethtool(int fd, const std::string& dev, void* request) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, dev.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = static_cast<char*>(request);
  return ::ioctl(fd, SIOCETHTOOL, &ifr) == 0;
}

std::string driver_of(int fd, const std::string& dev) {
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  if (!ethtool(fd, dev, &info)) return {};
  return std::string(info.driver, strnlen(info.driver, sizeof info.driver));
}

// Whether the device's active features hold one named `feature` (ethtool -k's names); none when the
// device does not say.
std::optional<bool> feature_active(int fd, const std::string& dev, std::string_view feature) {
  // The one set asked for: its count follows the header (ethtool_sset_info's data[]).
  alignas(ethtool_sset_info) std::uint8_t sset_space[sizeof(ethtool_sset_info) + sizeof(std::uint32_t)]{};
  auto* sset = reinterpret_cast<ethtool_sset_info*>(sset_space);
  sset->cmd = ETHTOOL_GSSET_INFO;
  sset->sset_mask = 1ULL << ETH_SS_FEATURES;
  if (!ethtool(fd, dev, sset) || sset->sset_mask == 0 || sset->data[0] == 0) return std::nullopt;
  const std::uint32_t n = sset->data[0];

  std::vector<std::uint8_t> names(sizeof(ethtool_gstrings) + std::size_t{n} * ETH_GSTRING_LEN);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(names.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_FEATURES;
  strings->len = n;
  if (!ethtool(fd, dev, strings)) return std::nullopt;

  const std::uint32_t blocks = (n + 31) / 32;
  std::vector<std::uint8_t> bits(sizeof(ethtool_gfeatures) + blocks * sizeof(ethtool_get_features_block));
  auto* features = reinterpret_cast<ethtool_gfeatures*>(bits.data());
  features->cmd = ETHTOOL_GFEATURES;
  features->size = blocks;
  if (!ethtool(fd, dev, features)) return std::nullopt;

  for (std::uint32_t i = 0; i < n; ++i) {
    const char* name = reinterpret_cast<const char*>(strings->data) + std::size_t{i} * ETH_GSTRING_LEN;
    if (std::string_view(name, strnlen(name, ETH_GSTRING_LEN)) == feature)
      return ((features->features[i / 32].active >> (i % 32)) & 1U) != 0;
  }
  return false;  // a kernel that has no such feature cannot offer it
}

int route_ifindex(nl_sock* sk, const endpoint& peer, std::string& error) {
  nl_addr* raw = nullptr;
  if (nl_addr_parse(peer.address().c_str(), peer.family(), &raw) < 0) {
    error = fmt::format("address {} not understood by libnl", peer.address());
    return 0;
  }
  nl_addr_ptr dst(raw);
  rtnl_route* found = nullptr;
  if (int e = rtnl_route_lookup(sk, dst.get(), &found); e < 0) {
    error = fmt::format("no route to {}: {}", peer.address(), nl_geterror(e));
    return 0;
  }
  route_ptr route(found);
  rtnl_nexthop* hop = rtnl_route_nexthop_n(route.get(), 0);
  if (!hop) error = fmt::format("the route to {} has no next hop", peer.address());
  return hop ? rtnl_route_nh_get_ifindex(hop) : 0;
}

}  // namespace

egress_device egress_to(const endpoint& peer) {
  egress_device d;
  nl_socket_ptr sk(nl_socket_alloc());
  if (!sk || nl_connect(sk.get(), NETLINK_ROUTE) < 0) {
    d.error = "rtnetlink could not be opened";
    return d;
  }
  const int ifindex = route_ifindex(sk.get(), peer, d.error);
  if (ifindex <= 0) return d;
  rtnl_link* found = nullptr;
  if (int e = rtnl_link_get_kernel(sk.get(), ifindex, nullptr, &found); e < 0) {
    d.error = fmt::format("interface {} of the route to {}: {}", ifindex, peer.address(), nl_geterror(e));
    return d;
  }
  link_ptr link(found);
  d.name = rtnl_link_get_name(link.get());
  if (const char* kind = rtnl_link_get_type(link.get())) d.kind = kind;
  d.loopback = (rtnl_link_get_flags(link.get()) & IFF_LOOPBACK) != 0;
  if (rtnl_link_get_gso_max_segs(link.get(), &d.gso_max_segs) < 0) d.gso_max_segs = 0;
  fd_handle fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const auto offered = fd ? feature_active(fd.get(), d.name, "tx-udp-segmentation") : std::nullopt;
  if (!offered) d.error = fmt::format("the offloads of {} (the route to {}) could not be read", d.name, peer.address());
  d.udp_segmentation = offered.value_or(false);
  if (fd) d.driver = driver_of(fd.get(), d.name);
  return d;
}

}  // namespace nb
