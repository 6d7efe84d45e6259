#include "core/host/host_info.hpp"

#include "core/base/clock.hpp"
#include "core/base/fd.hpp"
#include "core/base/version.hpp"
#include "core/base/whole_number.hpp"
#include "core/sys/eintr.hpp"
#include "core/sys/endpoint.hpp"
#include "core/sys/kernel_features.hpp"
#include "core/sys/socket.hpp"

#include <fmt/format.h>
#include <fmt/os.h>

#include <cerrno>
#include <cstring>

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace nb {

namespace {

std::string kernel_text() {
  utsname u{};
  if (::uname(&u) != 0) return "unknown";
  return fmt::format("{} {} {}", u.sysname, u.release, u.machine);
}

// `local`: the address a connected socket got, so its device is the route's.
std::string device_holding(const endpoint& local) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string name;
  for (ifaddrs* a = list; a && name.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != local.family()) continue;
    const socklen_t len = a->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (endpoint(a->ifa_addr, len).address() == local.address()) name = a->ifa_name;
  }
  ::freeifaddrs(list);
  return name;
}

}  // namespace

bool held_by_this_host(const endpoint& address) {
  const endpoint a = address.unmapped();
  return a.is_loopback() || !device_holding(a).empty();
}

nlohmann::json path_mtu(const std::string& peer) {
  try {
    const endpoint to = endpoint::resolve(peer, 9);  // discard port: connect only picks the route
    fd_handle fd(::socket(to.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd) return {{"error", fmt::format("socket: {}", std::strerror(errno))}};
    if (::connect(fd.get(), to.data(), to.size()) != 0)
      return {{"error", fmt::format("no route: {}", std::strerror(errno))}};
    int mtu = 0;
    socklen_t len = sizeof mtu;
    const bool v4 = to.family() == AF_INET;
    if (::getsockopt(fd.get(), v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_MTU : IPV6_MTU, &mtu, &len) != 0)
      return {{"error", fmt::format("IP_MTU: {}", std::strerror(errno))}};
    return {{"mtu", mtu}, {"dev", device_holding(endpoint::local_of(fd.get()))}};
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

nlohmann::json host_facts(const std::vector<std::string>& peers) {
  nlohmann::json features = nlohmann::json::object();
  for (kernel_feature f : all_kernel_features) features[std::string(switch_name(f))] = kernel_has(f);
  nlohmann::json mtu = nlohmann::json::object();
  for (const auto& p : peers) mtu[p] = path_mtu(p);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return {{"type", "host_info"},
          {"version", version},
          {"cpus", online > 0 ? online : 0},
          {"cpus_allowed", allowed_cpus().size()},
          {"kernel", kernel_text()},
          {"features", features},
          {"mtu", mtu}};
}

int serve_clock(int in, std::FILE* out, int max_replies, int idle_ms) {
  int replies = 0;
  char buf[256];
  while (replies < max_replies) {
    pollfd p{in, POLLIN, 0};
    const int ready = retry_eintr([&] { return ::poll(&p, 1, idle_ms); });
    if (ready <= 0) break;
    // A read may hold several requests.
    const ssize_t n = ::read(in, buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n && replies < max_replies; ++i) {
      if (buf[i] != '\n') continue;
      // As late as possible, just before the reply leaves.
      fmt::print(out, "clock {}\n", wall_ns());
      if (std::fflush(out) != 0) throw fmt::system_error(errno, "clock reply");
      ++replies;
    }
  }
  return replies;
}

long long parse_clock_reply(const std::string& line) {
  constexpr std::string_view prefix = "clock ";
  if (!line.starts_with(prefix)) return -1;
  const auto v = parse_whole<long long>(std::string_view(line).substr(prefix.size()), 0);
  return v ? *v : -1;
}

}  // namespace nb
