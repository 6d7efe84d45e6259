#include "core/sys/kernel_features.hpp"

#include <fmt/format.h>
#include <linux/filter.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

namespace nb {
namespace {

enum probe_state : int { unknown = 0, present, absent, disabled };
std::array<std::atomic<int>, all_kernel_features.size()> cache{};

// IPv4, or IPv6 on a host without it; -1 when neither can be made.
class probe_socket {
 public:
  probe_socket() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      fd_ = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      family_ = AF_INET6;
    }
  }
  ~probe_socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  probe_socket(const probe_socket&) = delete;
  probe_socket& operator=(const probe_socket&) = delete;
  int fd() const noexcept { return fd_; }
  // The wildcard: a namespace whose loopback is down has no 127.0.0.1.
  bool bind_any() const noexcept {
    if (family_ == AF_INET6) {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      return ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    return ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  }

 private:
  int fd_ = -1;
  int family_ = AF_INET;
};

// Before 4.18 udp_lib_getsockopt knows no UDP_SEGMENT (ENOPROTOOPT), and udp_sendmsg skips the control
// message without a word: only the socket option tells.
bool probe_gso() noexcept {
  probe_socket s;
  int segment = 0;
  socklen_t len = sizeof segment;
  return s.fd() >= 0 && ::getsockopt(s.fd(), SOL_UDP, UDP_SEGMENT, &segment, &len) == 0;
}

bool probe_gro() noexcept {
  probe_socket s;
  int on = 1;
  return s.fd() >= 0 && ::setsockopt(s.fd(), SOL_UDP, UDP_GRO, &on, sizeof on) == 0;
}

// The real thing on a group of one, bound as netserve's lanes are when it attaches.
bool probe_cbpf() noexcept {
  probe_socket s;
  int on = 1;
  if (s.fd() < 0 || ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0 || !s.bind_any()) return false;
  sock_filter code[] = {BPF_STMT(BPF_RET | BPF_K, 0)};
  sock_fprog prog{1, code};
  return ::setsockopt(s.fd(), SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) == 0;
}

// Present only when it reaches the drop counter (socket_drops reads SK_MEMINFO_DROPS).
bool probe_meminfo() noexcept {
  probe_socket s;
  std::uint32_t info[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof info;
  return s.fd() >= 0 && ::getsockopt(s.fd(), SOL_SOCKET, SO_MEMINFO, info, &len) == 0 &&
         len > SK_MEMINFO_DROPS * sizeof(std::uint32_t);
}

// In kernel_feature's order.
struct feature_facts {
  kernel_feature feature;
  std::string_view name;
  const char* what;
  const char* instead;
  bool (*probe)() noexcept;
};
constexpr std::array<feature_facts, all_kernel_features.size()> facts{{
    {kernel_feature::udp_gso, "gso", "UDP GSO (UDP_SEGMENT, Linux 4.18)",
     "UDP is sent with sendmmsg, a datagram per message", probe_gso},
    {kernel_feature::udp_gro, "gro", "UDP GRO (Linux 5.0)", "UDP is received with recvmmsg, a datagram per message",
     probe_gro},
    {kernel_feature::reuseport_cbpf, "cbpf", "reuseport BPF steering (SO_ATTACH_REUSEPORT_CBPF, Linux 4.5)",
     "a port's receive lanes share it by the kernel's hash of each sender's address, not by CPU", probe_cbpf},
    {kernel_feature::meminfo, "meminfo", "SO_MEMINFO (Linux 4.12)",
     "socket drops cannot be counted: a receiver's loss is all counted as path loss", probe_meminfo},
}};
static_assert([] {
  for (std::size_t i = 0; i < facts.size(); ++i)
    if (facts[i].feature != all_kernel_features[i] || static_cast<std::size_t>(facts[i].feature) != i) return false;
  return true;
}());

const feature_facts& facts_of(kernel_feature f) noexcept { return facts[static_cast<std::size_t>(f)]; }

template <class Visit>
void for_each_disabled(Visit&& visit) {
  const char* value = std::getenv(kernel_disable_variable);
  if (!value) return;
  std::string_view rest(value);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view entry = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (!entry.empty()) visit(entry);
  }
}

bool disabled_by_switch(kernel_feature f) noexcept {
  bool named = false;
  for_each_disabled([&](std::string_view entry) { named = named || entry == switch_name(f); });
  return named;
}

int state_of(kernel_feature f) noexcept {
  std::atomic<int>& slot = cache[static_cast<std::size_t>(f)];
  int s = slot.load(std::memory_order_acquire);
  if (s != unknown) return s;
  // Two threads may probe at once: both get the same answer.
  s = disabled_by_switch(f) ? disabled : facts_of(f).probe() ? present : absent;
  slot.store(s, std::memory_order_release);
  return s;
}

}  // namespace

std::string_view switch_name(kernel_feature f) noexcept { return facts_of(f).name; }

bool kernel_has(kernel_feature f) noexcept { return state_of(f) == present; }

void forget_kernel_probes() noexcept {
  for (auto& slot : cache) slot.store(unknown, std::memory_order_release);
}

void report_kernel_fallbacks(std::string_view program, std::initializer_list<kernel_feature> which, std::FILE* to) {
  for_each_disabled([](std::string_view entry) {
    for (kernel_feature f : all_kernel_features)
      if (entry == switch_name(f)) return;
    throw std::invalid_argument(
        fmt::format("{}: '{}' names no kernel feature (gso, gro, cbpf, meminfo)", kernel_disable_variable, entry));
  });
  for (kernel_feature f : which) {
    const int s = state_of(f);
    if (s == present) continue;
    const feature_facts& t = facts_of(f);
    fmt::print(to, "{}: no {} {}: {}\n", program, t.what,
               s == disabled ? fmt::format("(disabled by {})", kernel_disable_variable) : std::string("in this kernel"),
               t.instead);
  }
}

std::string batching_with(std::string_view path, bool by_hash, bool no_drops) {
  std::string s(path);
  if (by_hash) s += fmt::format(", {}", hash_lanes);
  if (no_drops) s += fmt::format(", {}", no_drop_count);
  return s;
}

bool drops_unknown(std::string_view batching) noexcept {
  return batching.find(no_drop_count) != std::string_view::npos;
}

}  // namespace nb
