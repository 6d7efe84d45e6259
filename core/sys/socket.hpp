#pragma once
// Raw sockets for the data plane: an owning fd and the options a bandwidth test needs.
//
// Errors, one style per function (fmt's os.h is the model): a failed system call throws
// fmt::system_error (a std::system_error carrying errno, "what: strerror"), unless the signature says
// that failure is an expected outcome: the bool of the thread placements (a CPU may be offline or
// outside this process's cpuset) and path_mtu's 0 (an unconnected socket has no path). Where the kernel
// may refuse an option and a fallback is right (SO_RCVBUFFORCE without CAP_NET_ADMIN), the function
// takes the fallback and says so below. The datagram I/O, where failures are normal, is core/data/udp_io.hpp.
#include "core/base/fd.hpp"
#include "core/sys/endpoint.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nb {

fd_handle make_socket(int family, int type);
// UDP socket bound to `local` (port 0 = any); SO_REUSEADDR off: a busy port is an error. With
// `reuse_port`, several sockets of this process share the port as one SO_REUSEPORT group.
fd_handle bind_udp(const endpoint& local, bool reuse_port = false);
// Steers each datagram of a SO_REUSEPORT group to the socket of the CPU whose softirq received it:
// the group's i-th socket (in bind order) takes `cpus[i]`; other CPUs spread over the group by number.
// Needs SO_ATTACH_REUSEPORT_CBPF (Linux 4.5, kernel_has(kernel_feature::reuseport_cbpf)); throws without.
void steer_by_cpu(int fd, const std::vector<int>& cpus);
// UDP socket connected to `remote` (optionally bound to a local address first).
fd_handle connect_udp(const endpoint& remote, const std::optional<endpoint>& local = std::nullopt);

// MSG_ZEROCOPY for this socket (SO_ZEROCOPY, Linux 4.14 for TCP); false with the kernel's reason in `why`
// where it is refused (an older kernel, another socket type).
bool enable_zerocopy(int fd, std::string& why);
// Socket buffers: asks for `bytes` and returns what the kernel granted, as getsockopt reports it.
// *BUFFORCE first, which may exceed rmem_max/wmem_max; refused without CAP_NET_ADMIN (EPERM), the plain
// option then asks for what the limits allow. `bytes` <= 0 only reads the size.
int set_recv_buffer(int fd, int bytes);
int set_send_buffer(int fd, int bytes);
int recv_buffer(int fd);
int send_buffer(int fd);

// Don't fragment: oversized sends fail with EMSGSIZE instead of being fragmented silently. An IPv6
// socket gets it for both families: bound to the wildcard, it also sends to IPv4 peers.
void set_dont_fragment(int fd, int family);
// The kernel's current path MTU for a connected socket (IP_MTU / IPV6_MTU); 0 for an unconnected one.
int path_mtu(int fd, int family);
// The path MTU towards `to` (an IPv4-mapped address as IPv4), as a connected don't-fragment UDP socket
// sees it: what a datagram sent there must fit. Nothing is sent. Throws fmt::system_error (no route).
int path_mtu_to(const endpoint& to);
// Whether `address` (the port is ignored) is one of this host's own, in this network namespace: the
// kernel lets a socket bind to it. 127.0.0.0/8 and ::1 are; with net.ipv4.ip_nonlocal_bind set, every
// address seems to be.
bool is_local_address(const endpoint& address);
// Largest UDP payload that fits in `mtu` for the family (IPv4: 20 + 8 bytes of headers, IPv6: 40 + 8).
int max_udp_payload(int mtu, int family) noexcept;
void set_dscp(int fd, int family, int dscp);
int tcp_mss(int fd);
void set_tcp_mss(int fd, int mss);
// The congestion-control algorithm (TCP_CONGESTION, netperf's -K). A name the kernel does not have, or
// that this user may not choose (not in net.ipv4.tcp_allowed_congestion_control without
// CAP_NET_ADMIN), throws std::runtime_error naming what is available or allowed.
void set_tcp_congestion(int fd, const std::string& name);
// Whether the kernel has `name` loaded now (net.ipv4.tcp_available_congestion_control). netserve asks it
// before trying a client's name: with CAP_NET_ADMIN, TCP_CONGESTION would load any module tcp_<name>.
bool congestion_loaded(const std::string& name);
// "congestion control 'x' is not available on this host (it has: reno cubic)".
std::string congestion_unavailable(const std::string& name);
// A name TCP_CONGESTION can take whole: 1 to 15 letters, digits, '_' or '-' (the kernel silently cuts a
// longer one at TCP_CA_NAME_MAX - 1).
bool valid_congestion_name(std::string_view name) noexcept;
// Total datagrams the kernel dropped on this socket (sk_drops, the counter SO_RXQ_OVFL reports), read
// at any instant with SO_MEMINFO so drops after the last delivered packet are not missed; 0 from a
// kernel without SO_MEMINFO (before 4.12) or whose SO_MEMINFO stops short of the drop counter, and
// then kernel_has(kernel_feature::meminfo) is false, for the result to say the count is unknown.
std::uint64_t socket_drops(int fd);
// Less than half the socket's receive buffer is held by what waits in its queue (SO_MEMINFO), so what
// comes next finds room; true where the kernel cannot say (before 4.12).
bool receive_queue_has_room(int fd) noexcept;
// Bytes waiting in the socket's receive queue (FIONREAD): for a UDP socket the next datagram's size, for
// TCP all unread bytes; a drain waits for 0.
int queued_bytes(int fd);
// Pins the calling thread to one CPU; false when the kernel refuses (the CPU is offline, outside this
// process's cpuset, or not one of the first CPU_SETSIZE), and the thread then runs where it ran.
bool pin_thread_to_cpu(int cpu);
// Lets the calling thread run on any of `cpus`; false as pin_thread_to_cpu.
bool set_thread_cpus(const std::vector<int>& cpus);
// The CPUs this process may run on (its affinity mask), in ascending order. A machine of more than
// CPU_SETSIZE (1024) CPUs is not supported: the kernel refuses the mask there, and this throws.
std::vector<int> allowed_cpus();

}  // namespace nb
