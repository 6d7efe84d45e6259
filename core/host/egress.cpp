#include "core/host/egress.hpp"

#include "core/base/fd.hpp"

#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netlink/msg.h>
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

// `feature` as ethtool -k names it; none when the device does not say.
std::optional<bool> feature_active(int fd, const std::string& dev, std::string_view feature) {
  // The one set's count follows the header.
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
  return false;
}

void keep_route(nl_object* o, void* found) {
  nl_object_get(o);
  *static_cast<rtnl_route**>(found) = reinterpret_cast<rtnl_route*>(o);
}

int parse_route(nl_msg* m, void* found) {
  nl_msg_parse(m, keep_route, found);
  return NL_OK;
}

// `ip route get PEER from SOURCE`.
route_ptr lookup(nl_sock* sk, nl_addr* dst, nl_addr* src, int family, int& err) {
  std::unique_ptr<nl_msg, freer<nl_msg, nlmsg_free>> msg(nlmsg_alloc_simple(RTM_GETROUTE, 0));
  rtmsg head{};
  head.rtm_family = static_cast<unsigned char>(family);
  err = -NLE_NOMEM;
  if (!msg || nlmsg_append(msg.get(), &head, sizeof head, NLMSG_ALIGNTO) < 0 ||
      nla_put_addr(msg.get(), RTA_DST, dst) < 0 || (src && nla_put_addr(msg.get(), RTA_SRC, src) < 0))
    return {};
  nl_socket_disable_auto_ack(sk);
  if ((err = nl_send_auto(sk, msg.get())) < 0) return {};
  rtnl_route* found = nullptr;
  nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, parse_route, &found);
  err = nl_recvmsgs_default(sk);
  route_ptr route(found);
  if (err >= 0 && !route) err = -NLE_OBJ_NOTFOUND;
  return err < 0 ? route_ptr() : std::move(route);
}

nl_addr_ptr address_of(const endpoint& e) {
  nl_addr* raw = nullptr;
  return nl_addr_parse(e.address().c_str(), e.family(), &raw) < 0 ? nl_addr_ptr() : nl_addr_ptr(raw);
}

int route_ifindex(nl_sock* sk, const endpoint& peer, const std::optional<endpoint>& source, std::string& error) {
  const nl_addr_ptr dst = address_of(peer);
  const nl_addr_ptr src = source ? address_of(*source) : nl_addr_ptr();
  if (!dst || (source && !src)) {
    error = fmt::format("address {} not understood by libnl", dst ? source->address() : peer.address());
    return 0;
  }
  int err = 0;
  const route_ptr route = lookup(sk, dst.get(), src.get(), peer.family(), err);
  if (!route) {
    error = fmt::format("no route to {}: {}", peer.address(), nl_geterror(err));
    return 0;
  }
  // No one device's offloads answer for several next hops.
  if (const int hops = rtnl_route_get_nnexthops(route.get()); hops != 1) {
    error = fmt::format("the route to {} has {} next hops", peer.address(), hops);
    return 0;
  }
  return rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(route.get(), 0));
}

}  // namespace

egress_device egress_to(const endpoint& peer, const std::optional<endpoint>& source) {
  egress_device d;
  nl_socket_ptr sk(nl_socket_alloc());
  if (!sk || nl_connect(sk.get(), NETLINK_ROUTE) < 0) {
    d.error = "rtnetlink could not be opened";
    return d;
  }
  const int ifindex = route_ifindex(sk.get(), peer, source, d.error);
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
