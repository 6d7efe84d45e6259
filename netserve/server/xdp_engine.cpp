#include "netserve/server/xdp_engine.hpp"

#include "core/base/clock.hpp"
#include "core/base/fd.hpp"
#include "netserve/xdp/count_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <vector>

// The skeleton embeds the compiled program: no file beside netserve at run time.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "nb_xdp_count.skel.h"
#pragma GCC diagnostic pop

namespace nb::serve {
namespace {

constexpr const char* program_name = "nb_count";  // count.bpf.c's

// Kept, not printed: a failure's one line ends with the last (the verifier's complaint), a success prints
// nothing. Only set-up calls libbpf, on main's thread.
std::string libbpf_said;

int libbpf_log(enum libbpf_print_level level, const char* format, va_list args) {
  if (level > LIBBPF_WARN) return 0;
  char line[512];
  int n = std::vsnprintf(line, sizeof(line), format, args);
  std::string_view s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  if (s.starts_with("libbpf: ")) s.remove_prefix(8);
  if (!s.empty()) libbpf_said = s;
  return n;
}

[[noreturn]] void fail(const std::string& interface, const std::string& what, int err) {
  err = err < 0 ? -err : err;
  std::string why = err == EPERM || err == EACCES
                        ? "permission denied (the XDP engine needs root: CAP_BPF and CAP_NET_ADMIN)"
                    : libbpf_said.empty() ? std::string(std::strerror(err))
                                          : fmt::format("{} (libbpf: {})", std::strerror(err), libbpf_said);
  throw std::runtime_error(fmt::format("--engine xdp on {}: {}: {}", interface, what, why));
}

nb_flow_key key_of(const endpoint& source, std::uint16_t port) {
  nb_flow_key k{};
  k.sport = htons(source.port());
  k.dport = htons(port);
  if (source.family() == AF_INET) {
    k.family = NB_XDP_INET;
    std::memcpy(k.saddr, &reinterpret_cast<const sockaddr_in*>(source.data())->sin_addr, 4);
    return k;
  }
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(source.data())->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&a)) {  // IPv4 on the wire
    k.family = NB_XDP_INET;
    std::memcpy(k.saddr, a.s6_addr + 12, 4);
  } else {
    k.family = NB_XDP_INET6;
    std::memcpy(k.saddr, a.s6_addr, 16);
  }
  return k;
}

std::string attached_name(__u8 mode) {
  if (mode == XDP_ATTACHED_DRV) return "xdp-native";
  if (mode == XDP_ATTACHED_SKB) return "xdp-generic";
  if (mode == XDP_ATTACHED_HW) return "xdp-offload";
  return "xdp-unknown";
}

__u32 mode_flags(const std::string& mode) {
  if (mode == "native") return XDP_FLAGS_DRV_MODE;
  if (mode == "generic") return XDP_FLAGS_SKB_MODE;
  return 0;
}

}  // namespace

struct xdp_engine::impl {
  xdp_options options;
  int ifindex = 0;
  nb_xdp_count* skel = nullptr;
  int link_fd = -1;        // -1 with a netlink attachment (legacy)
  __u32 legacy_flags = 0;  // to detach it
  bool legacy = false;
  std::string name;
  int cpus = 1;
  std::mutex slots_mutex;  // served tests add and remove flows from several threads
  std::vector<bool> slot_used = std::vector<bool>(NB_XDP_MAX_FLOWS);
  std::uint32_t next_slot = 0;

  std::uint32_t generation = 0;

  std::uint32_t take_slot(const endpoint& source);
  void release_slot(std::uint32_t slot);
  bool move_generation();

  void detach_leftover();
  bool detach_ours(bool last_look);
  void attach();
  void attach_mode(__u32 flags);
  ~impl();
};

// A crashed netserve's netlink attachment, or a link: a live netserve's, or one the kernel frees moments
// after its netserve ended. Netlink cannot detach a link (EBUSY): wait up to a second.
void xdp_engine::impl::detach_leftover() {
  for (int waited_ms = 0;; waited_ms += 20) {
    if (!detach_ours(waited_ms >= 1000)) return;
    ::usleep(20'000);
  }
}

// True when a link of ours is there (last_look: throws instead).
bool xdp_engine::impl::detach_ours(bool last_look) {
  bpf_xdp_query_opts q{};
  q.sz = sizeof(q);
  if (int r = bpf_xdp_query(ifindex, 0, &q); r < 0) fail(options.interface, "cannot query its XDP programs", r);
  if (q.prog_id == 0 && q.drv_prog_id == 0 && q.skb_prog_id == 0) return false;
  __u32 id = q.prog_id ? q.prog_id : (q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id);
  fd_handle prog(bpf_prog_get_fd_by_id(id));
  if (!prog) {
    if (errno == ENOENT) return false;
    fail(options.interface, fmt::format("cannot inspect the XDP program already attached (id {})", id), errno);
  }
  bpf_prog_info info{};
  __u32 len = sizeof(info);
  int r = bpf_obj_get_info_by_fd(prog.get(), &info, &len);
  if (r < 0) fail(options.interface, fmt::format("cannot inspect the XDP program already attached (id {})", id), r);
  if (std::strcmp(info.name, program_name) != 0)
    throw std::runtime_error(fmt::format(
        "--engine xdp on {}: XDP program '{}' (id {}) is already attached and netserve does not replace another "
        "program's (ip link set dev {} xdp off detaches it)",
        options.interface, info.name, id, options.interface));
  __u32 flags = q.attach_mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
  bpf_xdp_attach_opts ao{};  // only the program looked at
  ao.sz = sizeof(ao);
  ao.old_prog_fd = prog.get();
  if (int d = bpf_xdp_detach(ifindex, flags | XDP_FLAGS_REPLACE, &ao); d < 0) {
    if (d != -EBUSY && d != -EEXIST)
      fail(options.interface, fmt::format("cannot detach a leftover netserve XDP program (id {})", id), d);
    if (!last_look) return true;  // a link holds it
    throw std::runtime_error(
        fmt::format("--engine xdp on {}: another netserve is counting there (program id {})", options.interface, id));
  }
  fmt::print(stderr, "netserve: detached a leftover XDP counter (program id {}) from {}\n", id, options.interface);
  return false;
}

void xdp_engine::impl::attach_mode(__u32 flags) {
  int prog = bpf_program__fd(skel->progs.nb_count);
  bpf_link_create_opts lo{};
  lo.sz = sizeof(lo);
  lo.flags = flags;
  link_fd = bpf_link_create(prog, ifindex, BPF_XDP, &lo);
  if (link_fd >= 0) return;
  int err = errno;
  if (err != EINVAL || flags == 0) {  // a kernel before XDP links (5.9) may say EINVAL
    errno = err;
    return;
  }
  if (bpf_xdp_attach(ifindex, prog, flags | XDP_FLAGS_UPDATE_IF_NOEXIST, nullptr) == 0) {
    legacy = true;
    legacy_flags = flags;
  } else {
    errno = err;
  }
}

void xdp_engine::impl::attach() {
  const std::string& m = options.mode;
  if (m == "auto") {
    attach_mode(XDP_FLAGS_DRV_MODE);
    if (link_fd < 0 && !legacy) {
      int native_err = errno;
      attach_mode(XDP_FLAGS_SKB_MODE);
      if (link_fd >= 0 || legacy)
        fmt::print(stderr, "netserve: {}: no native XDP ({}): counting in generic XDP\n", options.interface,
                   std::strerror(native_err));
    }
  } else {
    attach_mode(mode_flags(m));
  }
  if (link_fd < 0 && !legacy) fail(options.interface, fmt::format("cannot attach the XDP program ({} mode)", m), errno);
  bpf_xdp_query_opts q{};
  q.sz = sizeof(q);
  if (int r = bpf_xdp_query(ifindex, 0, &q); r < 0) fail(options.interface, "cannot query its XDP mode", r);
  name = attached_name(q.attach_mode);
}

xdp_engine::impl::~impl() {
  if (link_fd >= 0) ::close(link_fd);  // detaches
  if (legacy) bpf_xdp_detach(ifindex, legacy_flags, nullptr);
  if (skel) nb_xdp_count::destroy(skel);
}

bool xdp_engine::built_in() noexcept { return true; }

xdp_engine::xdp_engine(const xdp_options& options) : impl_(std::make_unique<impl>()) {
  impl& s = *impl_;
  s.options = options;
  if (options.mode != "auto" && options.mode != "native" && options.mode != "generic")
    throw std::invalid_argument(fmt::format("--xdp-mode: '{}' is not auto, native or generic", options.mode));
  libbpf_set_print(libbpf_log);
  libbpf_said.clear();
  s.ifindex = static_cast<int>(if_nametoindex(options.interface.c_str()));
  if (s.ifindex == 0) fail(options.interface, "no such interface in this network namespace", errno);
  s.detach_leftover();
  s.skel = nb_xdp_count::open();
  if (!s.skel) fail(options.interface, "cannot open the XDP program", errno);
  s.skel->rodata->pass_matched = options.pass ? 1 : 0;
  s.skel->rodata->has_jiffies = libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_jiffies64, nullptr) == 1 ? 1 : 0;
  if (int r = nb_xdp_count::load(s.skel); r < 0) fail(options.interface, "the kernel refused the XDP program", r);
  s.cpus = libbpf_num_possible_cpus();
  if (s.cpus <= 0) fail(options.interface, "cannot count the possible CPUs", s.cpus);
  s.attach();
}

xdp_engine::~xdp_engine() = default;

const std::string& xdp_engine::name() const noexcept { return impl_->name; }
const std::string& xdp_engine::interface() const noexcept { return impl_->options.interface; }
bool xdp_engine::pass() const noexcept { return impl_->options.pass; }

// Round-robin: a slot just freed is reused last, long after a CPU that still counted into it is done.
std::uint32_t xdp_engine::impl::take_slot(const endpoint& source) {
  std::lock_guard lock(slots_mutex);
  for (std::uint32_t i = 0; i < NB_XDP_MAX_FLOWS; ++i) {
    const std::uint32_t s = (next_slot + i) % NB_XDP_MAX_FLOWS;
    if (slot_used[s]) continue;
    slot_used[s] = true;
    next_slot = (s + 1) % NB_XDP_MAX_FLOWS;
    return s;
  }
  throw std::runtime_error(
      fmt::format("the XDP flow table is full ({} flows): cannot count {}", NB_XDP_MAX_FLOWS, source.to_string()));
}

void xdp_engine::impl::release_slot(std::uint32_t slot) {
  std::lock_guard lock(slots_mutex);
  slot_used[slot] = false;
}

void xdp_engine::add_flow(const endpoint& source, std::uint16_t port, std::uint32_t message_size) {
  impl& s = *impl_;
  const nb_flow_key k = key_of(source, port);
  const std::uint32_t slot = s.take_slot(source);
  std::vector<nb_flow_count> zero(static_cast<std::size_t>(s.cpus));
  for (nb_flow_count& c : zero) c.message_size = message_size;
  int err = 0;
  if (bpf_map_update_elem(bpf_map__fd(s.skel->maps.counts), &slot, zero.data(), BPF_ANY) < 0 ||
      bpf_map_update_elem(bpf_map__fd(s.skel->maps.flows), &k, &slot, BPF_NOEXIST) < 0)
    err = errno;
  if (err == 0) return;
  s.release_slot(slot);
  if (err == EEXIST)
    throw std::runtime_error(
        fmt::format("flow {} -> port {} is already counted by another test", source.to_string(), port));
  throw std::runtime_error(
      fmt::format("cannot add flow {} to the XDP table: {}", source.to_string(), std::strerror(err)));
}

void xdp_engine::remove_flow(const endpoint& source, std::uint16_t port) noexcept {
  impl& s = *impl_;
  const nb_flow_key k = key_of(source, port);
  std::uint32_t slot = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(s.skel->maps.flows), &k, &slot) < 0) return;
  bpf_map_delete_elem(bpf_map__fd(s.skel->maps.flows), &k);
  if (s.move_generation()) s.release_slot(slot);
}

// After the flow's delete, so a CPU whose remembered flow is stale finds it gone. Written through the map (a
// kernel before 5.5 gives no mapping); false when refused: the slot stays taken, a CPU may still count into it.
bool xdp_engine::impl::move_generation() {
  std::lock_guard lock(slots_mutex);
  nb_xdp_count::nb_xdp_count__bss v{};
  v.flow_generation = ++generation;
  const std::uint32_t zero = 0;
  return bpf_map_update_elem(bpf_map__fd(skel->maps.bss), &zero, &v, BPF_ANY) == 0;
}

flow_totals xdp_engine::read_flow(const endpoint& source, std::uint16_t port) const {
  nb_flow_key k = key_of(source, port);
  std::vector<nb_flow_count> per_cpu(static_cast<std::size_t>(impl_->cpus));
  flow_totals t;
  t.jitter_ns = -1;  // unknown
  std::uint32_t slot = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.flows), &k, &slot) < 0 ||
      bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.counts), &slot, per_cpu.data()) < 0)
    return t;
  // CLOCK_MONOTONIC to the socket engine's wall clock.
  const std::int64_t to_wall = wall_ns() - mono_ns();
  for (const nb_flow_count& c : per_cpu) {
    flow_totals cpu;
    cpu.packets = cpu.buffers = c.packets;
    cpu.bytes = c.bytes;
    cpu.sequenced = c.sequenced;
    cpu.out_of_order = c.out_of_order;
    cpu.gaps = c.gaps;
    cpu.next_seq = c.next_seq;
    if (c.first_ns != 0) {
      cpu.first_arrival_ns = static_cast<std::int64_t>(c.first_ns) + to_wall;
      cpu.last_arrival_ns = static_cast<std::int64_t>(c.last_ns) + to_wall;
    }
    t.add_counts(cpu);
  }
  return t;
}

}  // namespace nb::serve
