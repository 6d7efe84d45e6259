#pragma once
// Kernel features beyond Linux 3.10, probed once and cached, each with a fallback (docs/kernel-features.md).
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

// Its name in NETBENCH_DISABLE and in netserve's ready line.
std::string_view switch_name(kernel_feature f) noexcept;

// A probe that cannot even make its socket reports the feature missing.
bool kernel_has(kernel_feature f) noexcept;

// For tests that change what the kernel answers or set NETBENCH_DISABLE.
void forget_kernel_probes() noexcept;

// Once at start, before any data thread: throws std::invalid_argument on a NETBENCH_DISABLE typo, and
// prints a line per missing feature saying what runs instead.
void report_kernel_fallbacks(std::string_view program, std::initializer_list<kernel_feature> which,
                             std::FILE* to = stderr);

// Qualifiers after a receiver's batching path ("gro, no drop count"), which netload reads back.
inline constexpr std::string_view no_drop_count = "no drop count";
inline constexpr std::string_view hash_lanes = "lanes by kernel hash";
std::string batching_with(std::string_view path, bool by_hash, bool no_drops);
// The receiver's drop count is not known (0 stands for it).
bool drops_unknown(std::string_view batching) noexcept;

}  // namespace nb
