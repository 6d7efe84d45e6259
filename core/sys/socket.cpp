#include "core/sys/socket.hpp"

#include "core/sys/kernel_features.hpp"

#include <fmt/format.h>
#include <linux/filter.h>
#include <linux/sock_diag.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nb {
namespace {

void set_int(int fd, int level, int name, int value, const char* what) {
  if (::setsockopt(fd, level, name, &value, sizeof value) != 0) throw fmt::system_error(errno, "setsockopt({})", what);
}

int get_int(int fd, int level, int name, const char* what) {
  int v = 0;
  socklen_t len = sizeof v;
  if (::getsockopt(fd, level, name, &v, &len) != 0) throw fmt::system_error(errno, "getsockopt({})", what);
  return v;
}

std::string sysctl_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  return std::getline(in, line) && !line.empty() ? line : "unknown";
}

}  // namespace

fd_handle make_socket(int family, int type) {
  int fd = ::socket(family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) throw fmt::system_error(errno, "socket");
  return fd_handle(fd);
}

fd_handle bind_udp(const endpoint& local, bool reuse_port) {
  auto fd = make_socket(local.family(), SOCK_DGRAM);
  if (local.family() == AF_INET6)  // an IPv6 wildcard also takes IPv4
    set_int(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, 0, "IPV6_V6ONLY");
  if (reuse_port) set_int(fd.get(), SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT");
  if (::bind(fd.get(), local.data(), local.size()) != 0) throw fmt::system_error(errno, "bind");
  return fd;
}

void steer_by_cpu(int fd, const std::vector<int>& cpus) {
  // Any other CPU -> CPU mod n: an index past the group's end would make the kernel fall back to its hash.
  std::vector<sock_filter> code;
  code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(SKF_AD_OFF + SKF_AD_CPU)));
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(cpus[i]), 0, 1));
    code.push_back(BPF_STMT(BPF_RET | BPF_K, static_cast<std::uint32_t>(i)));
  }
  code.push_back(BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, static_cast<std::uint32_t>(cpus.size())));
  code.push_back(BPF_STMT(BPF_RET | BPF_A, 0));
  sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
  if (::setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) != 0)
    throw fmt::system_error(errno, "setsockopt(SO_ATTACH_REUSEPORT_CBPF)");
}

fd_handle connect_udp(const endpoint& remote, const std::optional<endpoint>& local) {
  auto fd = make_socket(remote.family(), SOCK_DGRAM);
  if (local && ::bind(fd.get(), local->data(), local->size()) != 0) throw fmt::system_error(errno, "bind");
  if (::connect(fd.get(), remote.data(), remote.size()) != 0) throw fmt::system_error(errno, "connect");
  return fd;
}

namespace {
int set_buffer(int fd, int bytes, int force, int plain, const char* force_name, const char* plain_name) {
  if (bytes > 0 && ::setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof bytes) != 0) {
    // EPERM: no CAP_NET_ADMIN.
    if (errno != EPERM) throw fmt::system_error(errno, "setsockopt({})", force_name);
    set_int(fd, SOL_SOCKET, plain, bytes, plain_name);
  }
  return get_int(fd, SOL_SOCKET, plain, plain_name);
}
}  // namespace

int set_recv_buffer(int fd, int bytes) {
  return set_buffer(fd, bytes, SO_RCVBUFFORCE, SO_RCVBUF, "SO_RCVBUFFORCE", "SO_RCVBUF");
}
int set_send_buffer(int fd, int bytes) {
  return set_buffer(fd, bytes, SO_SNDBUFFORCE, SO_SNDBUF, "SO_SNDBUFFORCE", "SO_SNDBUF");
}
int recv_buffer(int fd) { return get_int(fd, SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF"); }
int send_buffer(int fd) { return get_int(fd, SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF"); }

void set_dont_fragment(int fd, int family) {
  if (family == AF_INET6) {
    set_int(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO, "IPV6_MTU_DISCOVER");
    // For IPv4-mapped peers; a v6-only socket may refuse it, and sends no IPv4 anyway.
    int v = IP_PMTUDISC_DO;
    (void)::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof v);
  } else {
    set_int(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO, "IP_MTU_DISCOVER");
  }
}

int path_mtu_to(const endpoint& to) {
  const endpoint peer = to.unmapped();
  fd_handle fd = make_socket(peer.family(), SOCK_DGRAM);
  set_dont_fragment(fd.get(), peer.family());
  if (::connect(fd.get(), peer.data(), peer.size()) != 0)
    throw fmt::system_error(errno, "connect to {}", peer.address());
  return path_mtu(fd.get(), peer.family());
}

bool is_local_address(const endpoint& address) {
  endpoint any_port = address.unmapped();
  any_port.set_port(0);
  fd_handle fd = make_socket(any_port.family(), SOCK_DGRAM);
  return ::bind(fd.get(), any_port.data(), any_port.size()) == 0;
}

int path_mtu(int fd, int family) {
  int mtu = 0;
  socklen_t len = sizeof mtu;
  const int rc = family == AF_INET6 ? ::getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &len)
                                    : ::getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len);
  if (rc == 0) return mtu;
  if (errno == ENOTCONN) return 0;  // netserve's shared port socket
  throw fmt::system_error(errno, "getsockopt(IP_MTU)");
}

int max_udp_payload(int mtu, int family) noexcept { return mtu - (family == AF_INET6 ? 48 : 28); }

void set_dscp(int fd, int family, int dscp) {
  if (family == AF_INET6) set_int(fd, IPPROTO_IPV6, IPV6_TCLASS, dscp << 2, "IPV6_TCLASS");
  else set_int(fd, IPPROTO_IP, IP_TOS, dscp << 2, "IP_TOS");
}

int tcp_mss(int fd) { return get_int(fd, IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG"); }

void set_tcp_mss(int fd, int mss) { set_int(fd, IPPROTO_TCP, TCP_MAXSEG, mss, "TCP_MAXSEG"); }

bool valid_congestion_name(std::string_view name) noexcept {
  auto ok = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  return !name.empty() && name.size() <= 15 && std::all_of(name.begin(), name.end(), ok);
}

bool congestion_loaded(const std::string& name) {
  std::istringstream loaded(sysctl_line("/proc/sys/net/ipv4/tcp_available_congestion_control"));
  std::string word;
  while (loaded >> word)
    if (word == name) return true;
  return false;
}

std::string congestion_unavailable(const std::string& name) {
  return fmt::format("congestion control '{}' is not available on this host (it has: {})", name,
                     sysctl_line("/proc/sys/net/ipv4/tcp_available_congestion_control"));
}

void set_tcp_congestion(int fd, const std::string& name) {
  if (!valid_congestion_name(name))
    throw std::runtime_error(fmt::format("'{}' is not a congestion-control name", name));
  if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(), static_cast<socklen_t>(name.size())) == 0) return;
  if (errno == ENOENT) throw std::runtime_error(congestion_unavailable(name));
  if (errno == EPERM)
    throw std::runtime_error(
        fmt::format("congestion control '{}' is not allowed for this user (allowed: {}; "
                    "net.ipv4.tcp_allowed_congestion_control, or CAP_NET_ADMIN)",
                    name, sysctl_line("/proc/sys/net/ipv4/tcp_allowed_congestion_control")));
  throw fmt::system_error(errno, "setsockopt(TCP_CONGESTION, {})", name);
}

bool enable_zerocopy(int fd, std::string& why) {
  int on = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof on) == 0) return true;
  why = std::strerror(errno);
  return false;
}

bool receive_queue_has_room(int fd) noexcept {
  std::uint32_t info[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &len) != 0 || len <= SK_MEMINFO_RCVBUF * sizeof(std::uint32_t))
    return true;
  return info[SK_MEMINFO_RMEM_ALLOC] < info[SK_MEMINFO_RCVBUF] / 2;
}

std::uint64_t socket_drops(int fd) {
  if (!kernel_has(kernel_feature::meminfo)) return 0;
  std::uint32_t info[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &len) != 0) {
    if (errno == ENOPROTOOPT) return 0;  // before 4.12
    throw fmt::system_error(errno, "getsockopt(SO_MEMINFO)");
  }
  if (len <= SK_MEMINFO_DROPS * sizeof(std::uint32_t)) return 0;
  return info[SK_MEMINFO_DROPS];
}

int queued_bytes(int fd) {
  int n = 0;
  if (::ioctl(fd, FIONREAD, &n) != 0) throw fmt::system_error(errno, "ioctl(FIONREAD)");
  return n;
}

bool pin_thread_to_cpu(int cpu) { return set_thread_cpus({cpu}); }

bool set_thread_cpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);  // past CPU_SETSIZE: left out, and the kernel refuses
  return ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) throw fmt::system_error(errno, "sched_getaffinity");
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace nb
