#include "core/socket.hpp"

#include <linux/filter.h>
#include <linux/sock_diag.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>

namespace nb {

void fd_handle::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::system_error sys_error(const char* what) { return {errno, std::system_category(), what}; }

fd_handle make_socket(int family, int type) {
  int fd = ::socket(family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) throw sys_error("socket");
  return fd_handle(fd);
}

fd_handle bind_udp(const endpoint& local, bool reuse_port) {
  auto fd = make_socket(local.family(), SOCK_DGRAM);
  int on = 1, off = 0;
  if (local.family() == AF_INET6)  // an IPv6 wildcard also takes IPv4, like the TCP acceptor
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  if (reuse_port && ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0)
    throw sys_error("setsockopt(SO_REUSEPORT)");
  if (::bind(fd.get(), local.data(), local.size()) != 0) throw sys_error("bind");
  return fd;
}

void steer_by_cpu(int fd, const std::vector<int>& cpus) {
  // Classic BPF: A = the current CPU; a table of "CPU c -> socket i"; any other CPU -> A mod n. An index
  // past the group's end would make the kernel fall back to its hash, so every answer is in range.
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
    throw sys_error("setsockopt(SO_ATTACH_REUSEPORT_CBPF)");
}

fd_handle connect_udp(const endpoint& remote, const std::optional<endpoint>& local) {
  auto fd = make_socket(remote.family(), SOCK_DGRAM);
  if (local && ::bind(fd.get(), local->data(), local->size()) != 0) throw sys_error("bind");
  if (::connect(fd.get(), remote.data(), remote.size()) != 0) throw sys_error("connect");
  return fd;
}

namespace {
int get_int(int fd, int level, int name) {
  int v = 0;
  socklen_t len = sizeof v;
  ::getsockopt(fd, level, name, &v, &len);
  return v;
}
int set_buffer(int fd, int bytes, int force, int plain) {
  if (bytes > 0 && ::setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof bytes) != 0)
    ::setsockopt(fd, SOL_SOCKET, plain, &bytes, sizeof bytes);
  return get_int(fd, SOL_SOCKET, plain);
}
}  // namespace

int set_recv_buffer(int fd, int bytes) { return set_buffer(fd, bytes, SO_RCVBUFFORCE, SO_RCVBUF); }
int set_send_buffer(int fd, int bytes) { return set_buffer(fd, bytes, SO_SNDBUFFORCE, SO_SNDBUF); }
int recv_buffer(int fd) { return get_int(fd, SOL_SOCKET, SO_RCVBUF); }
int send_buffer(int fd) { return get_int(fd, SOL_SOCKET, SO_SNDBUF); }

void set_dont_fragment(int fd, int family) {
  int v = family == AF_INET6 ? IPV6_PMTUDISC_DO : IP_PMTUDISC_DO;
  int rc = family == AF_INET6 ? ::setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v, sizeof v)
                              : ::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof v);
  if (rc != 0) throw sys_error("setsockopt(MTU_DISCOVER)");
}

int path_mtu(int fd, int family) {
  return family == AF_INET6 ? get_int(fd, IPPROTO_IPV6, IPV6_MTU) : get_int(fd, IPPROTO_IP, IP_MTU);
}

int max_udp_payload(int mtu, int family) noexcept { return mtu - (family == AF_INET6 ? 48 : 28); }

void set_dscp(int fd, int family, int dscp) {
  int tos = dscp << 2;
  int rc = family == AF_INET6 ? ::setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos)
                              : ::setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
  if (rc != 0) throw sys_error("setsockopt(DSCP)");
}

int tcp_mss(int fd) { return get_int(fd, IPPROTO_TCP, TCP_MAXSEG); }

void set_tcp_mss(int fd, int mss) {
  if (::setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) != 0) throw sys_error("setsockopt(TCP_MAXSEG)");
}

std::uint64_t socket_drops(int fd) {
  std::uint32_t info[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &len) != 0 || len <= SK_MEMINFO_DROPS * sizeof(std::uint32_t))
    return 0;
  return info[SK_MEMINFO_DROPS];
}

bool pin_thread_to_cpu(int cpu) { return set_thread_cpus({cpu}); }

bool set_thread_cpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace nb
