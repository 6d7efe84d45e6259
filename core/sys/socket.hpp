#pragma once
// Raw sockets for the data plane. A failed system call throws fmt::system_error unless the signature
// makes failure an expected outcome (a bool, path_mtu's 0).
#include "core/base/fd.hpp"
#include "core/sys/endpoint.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nb {

fd_handle make_socket(int family, int type);
// SO_REUSEADDR off: a busy port is an error.
fd_handle bind_udp(const endpoint& local, bool reuse_port = false);
// The i-th socket of the SO_REUSEPORT group (in bind order) takes what CPU cpus[i]'s softirq received.
// Throws without kernel_feature::reuseport_cbpf.
void steer_by_cpu(int fd, const std::vector<int>& cpus);
fd_handle connect_udp(const endpoint& remote, const std::optional<endpoint>& local = std::nullopt);

// SO_ZEROCOPY (Linux 4.14 for TCP); false with the kernel's reason in `why`.
bool enable_zerocopy(int fd, std::string& why);
// Returns what the kernel granted. *BUFFORCE first, to exceed rmem_max/wmem_max; without CAP_NET_ADMIN
// the plain option. `bytes` <= 0 only reads the size.
int set_recv_buffer(int fd, int bytes);
int set_send_buffer(int fd, int bytes);
int recv_buffer(int fd);
int send_buffer(int fd);

// Oversized sends fail with EMSGSIZE. An IPv6 socket gets both families' option: it may send to IPv4.
void set_dont_fragment(int fd, int family);
int path_mtu(int fd, int family);
// As a connected don't-fragment UDP socket sees it; nothing is sent.
int path_mtu_to(const endpoint& to);
// Whether a socket may bind to it; with net.ipv4.ip_nonlocal_bind set, every address may.
bool is_local_address(const endpoint& address);
int max_udp_payload(int mtu, int family) noexcept;
void set_dscp(int fd, int family, int dscp);
int tcp_mss(int fd);
void set_tcp_mss(int fd, int mss);
// Throws std::runtime_error naming what is available or allowed to this user.
void set_tcp_congestion(int fd, const std::string& name);
// With CAP_NET_ADMIN, TCP_CONGESTION would load any module tcp_<name>: netserve asks this first.
bool congestion_loaded(const std::string& name);
std::string congestion_unavailable(const std::string& name);
// The kernel silently cuts a name at TCP_CA_NAME_MAX - 1.
bool valid_congestion_name(std::string_view name) noexcept;
// sk_drops by SO_MEMINFO, which unlike SO_RXQ_OVFL counts drops after the last delivered datagram.
// 0 where kernel_has(kernel_feature::meminfo) is false.
std::uint64_t socket_drops(int fd);
// Less than half the receive buffer is queued; true where the kernel cannot say.
bool receive_queue_has_room(int fd) noexcept;
// FIONREAD: for UDP the next datagram's size, for TCP all unread bytes.
int queued_bytes(int fd);
// False when the kernel refuses (an offline CPU, outside the cpuset); the thread then runs where it ran.
bool pin_thread_to_cpu(int cpu);
bool set_thread_cpus(const std::vector<int>& cpus);
// Throws on a machine of more than CPU_SETSIZE CPUs.
std::vector<int> allowed_cpus();

}  // namespace nb
