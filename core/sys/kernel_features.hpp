#pragma once
// The kernel features the data plane uses beyond what Linux 3.10 offers (the static release's floor,
// packaging/INSTALL.static.in), each probed once per process and cached. Where one is missing the
// program takes a fallback instead of failing, or worse, running a different path without a word
// (a kernel before 4.18 ignores a UDP_SEGMENT control message: each GSO buffer would leave as one
// oversized datagram), and the result says which path ran:
//
//   feature          kernel  probe                                         without it
//   gso  UDP GSO     4.18    getsockopt(SOL_UDP, UDP_SEGMENT)              sendmmsg, batching "sendmmsg"
//   gro  UDP GRO     5.0     setsockopt(SOL_UDP, UDP_GRO)                  recvmmsg, batching "recvmmsg"
//   cbpf reuseport   4.5     setsockopt(SO_ATTACH_REUSEPORT_CBPF) on a     netserve's receive lanes share a
//        BPF steering        bound SO_REUSEPORT socket                     port by the kernel's hash, batching
//                                                                          "..., lanes by kernel hash"
//   meminfo          4.12    getsockopt(SOL_SOCKET, SO_MEMINFO)            socket drops unknown (counted as
//        SO_MEMINFO                                                        path loss), batching "..., no drop count"
//
// Not probed, as every kernel from 3.10 has them: sendmmsg (3.0), recvmmsg and MSG_WAITFORONE (2.6.33),
// SO_REUSEPORT (3.9), SO_TIMESTAMPNS, IP_PKTINFO, IP_MTU_DISCOVER with IP_PMTUDISC_DO (the only value
// used; 2.2) and IPV6_PMTUDISC_DO. SO_TXTIME is not used. Not probed and not in vanilla 3.10-3.12: an
// IP_TOS control message (3.13; CentOS 7 backports it), which netserve's reverse sender uses for --dscp:
// refused with EINVAL there, the test fails rather than run without its DSCP.
//
// NETBENCH_DISABLE (a comma list of the names above: gso,gro,cbpf,meminfo) makes the probe of each named
// feature report it missing, so every fallback can be run, and tested, on a new kernel.
#include <array>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>

namespace nb {

enum class kernel_feature { udp_gso, udp_gro, reuseport_cbpf, meminfo };
inline constexpr std::array all_kernel_features{kernel_feature::udp_gso, kernel_feature::udp_gro,
                                                kernel_feature::reuseport_cbpf, kernel_feature::meminfo};
inline constexpr const char* kernel_disable_variable = "NETBENCH_DISABLE";

// Its name in NETBENCH_DISABLE and in netserve's ready line: "gso", "gro", "cbpf", "meminfo".
std::string_view switch_name(kernel_feature f) noexcept;

// Whether the kernel offers `f` (and NETBENCH_DISABLE does not name it). The first call per feature
// probes with a socket of its own; later calls read the cache. Never throws: a probe that cannot even
// make its socket reports the feature missing, and the fallback runs.
bool kernel_has(kernel_feature f) noexcept;

// Forgets every probe's answer, so the next kernel_has probes again: for tests that change what the
// kernel answers (a seccomp filter in a forked child) or set NETBENCH_DISABLE.
void forget_kernel_probes() noexcept;

// Checks NETBENCH_DISABLE (std::invalid_argument naming an entry that is no feature: a typo must not
// leave a test running the path it meant to avoid), probes the features `which` (those the program
// uses), and prints one line per missing one to `to`, "program: no UDP GSO (...) in this kernel: ...",
// saying what runs instead. Called once at start, before any data thread.
void report_kernel_fallbacks(std::string_view program, std::initializer_list<kernel_feature> which,
                             std::FILE* to = stderr);

// The qualifiers a receiver's batching carries after its path ("gro, no drop count"), which netload
// reads back from netserve's result: the receiving kernel could not count its socket drops, or the
// port's receive lanes share it by the kernel's hash instead of by CPU.
inline constexpr std::string_view no_drop_count = "no drop count";
inline constexpr std::string_view hash_lanes = "lanes by kernel hash";
// `path` followed by ", qualifier" for each that applies, in this order: "gro, lanes by kernel hash, no
// drop count".
std::string batching_with(std::string_view path, bool by_hash, bool no_drops);
// The batching names the qualifier no_drop_count: the receiver's drop count is not known (0 stands for it).
bool drops_unknown(std::string_view batching) noexcept;

}  // namespace nb
