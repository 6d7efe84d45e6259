#pragma once
// Raw sockets for the data plane: an owning fd and the options a bandwidth test needs.
// Failures that are normal at a socket edge come back as std::error_code; setup failures throw.
#include "core/endpoint.hpp"

#include <cstdint>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

namespace nb {

class fd_handle {
 public:
  fd_handle() = default;
  explicit fd_handle(int fd) noexcept : fd_(fd) {}
  fd_handle(fd_handle&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  fd_handle& operator=(fd_handle&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  ~fd_handle() { reset(); }
  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept;
  explicit operator bool() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

std::system_error sys_error(const char* what);  // from errno

fd_handle make_socket(int family, int type);  // throws
// UDP socket bound to `local` (port 0 = any); SO_REUSEADDR off: a busy port is an error. With
// `reuse_port`, several sockets of this process share the port as one SO_REUSEPORT group.
fd_handle bind_udp(const endpoint& local, bool reuse_port = false);
// Steers each datagram of a SO_REUSEPORT group to the socket of the CPU whose softirq received it:
// the group's i-th socket (in bind order) takes `cpus[i]`; other CPUs spread over the group by number.
// Throws if the kernel refuses the filter.
void steer_by_cpu(int fd, const std::vector<int>& cpus);
// UDP socket connected to `remote` (optionally bound to a local address first).
fd_handle connect_udp(const endpoint& remote, const std::optional<endpoint>& local = std::nullopt);

// Socket buffers: asks for `bytes` (root may exceed rmem_max via *BUFFORCE) and returns what the kernel
// granted, as getsockopt reports it.
int set_recv_buffer(int fd, int bytes);
int set_send_buffer(int fd, int bytes);
int recv_buffer(int fd);
int send_buffer(int fd);

// Don't fragment: oversized sends fail with EMSGSIZE instead of being fragmented silently.
void set_dont_fragment(int fd, int family);
// The kernel's current path MTU for a connected socket (IP_MTU / IPV6_MTU); 0 when unknown.
int path_mtu(int fd, int family);
// Largest UDP payload that fits in `mtu` for the family (IPv4: 20 + 8 bytes of headers, IPv6: 40 + 8).
int max_udp_payload(int mtu, int family) noexcept;
void set_dscp(int fd, int family, int dscp);
int tcp_mss(int fd);
void set_tcp_mss(int fd, int mss);
// Total datagrams the kernel dropped on this socket (sk_drops, the counter SO_RXQ_OVFL reports), read
// at any instant with SO_MEMINFO so drops after the last delivered packet are not missed.
std::uint64_t socket_drops(int fd);
// Pins the calling thread to one CPU; returns false (with errno) if the kernel refuses.
bool pin_thread_to_cpu(int cpu);
// Lets the calling thread run on any of `cpus`.
bool set_thread_cpus(const std::vector<int>& cpus);
// The CPUs this process may run on (its affinity mask), in ascending order.
std::vector<int> allowed_cpus();

}  // namespace nb
