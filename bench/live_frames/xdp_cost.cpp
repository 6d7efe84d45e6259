// xdp_cost: what an XDP receiver costs per frame on this CPU, from BPF_PROG_RUN's own timing (no device):
// netserve's counter (netserve/xdp/count.bpf.c, with one registered flow that every frame belongs to)
// against the drop-only program. Also checks that the counter counted every run.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <CLI/CLI.hpp>

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "netserve/xdp/count_maps.h"
#include "udp_frame.hpp"

namespace {

constexpr std::uint16_t sport = 40000, dport = 40001;
constexpr char saddr[] = "198.18.0.1";

std::vector<unsigned char> udp_frame(std::size_t payload) {
  in_addr src{}, dst{};
  inet_pton(AF_INET, saddr, &src);
  inet_pton(AF_INET, "198.18.0.2", &dst);
  return lf::udp4_frame(src.s_addr, dst.s_addr, sport, dport, payload);
}

nb_flow_key flow_key() {
  nb_flow_key k{};
  k.family = NB_XDP_INET;
  k.sport = htons(sport);
  k.dport = htons(dport);
  inet_pton(AF_INET, saddr, k.saddr);
  return k;
}

// The counter's own registration, as netserve's xdp_engine::add_flow makes it. Without `counts`, the
// counter before slots (its per-CPU hash held the counts), so the two can be timed side by side.
void add_flow(bpf_object* obj, std::size_t payload, std::uint32_t slot = 0) {
  bpf_map* flows = bpf_object__find_map_by_name(obj, "flows");
  bpf_map* counts = bpf_object__find_map_by_name(obj, "counts");
  if (!flows) return;  // the drop-only program
  // Each CPU's value zero but its message size, the last field in either layout.
  const std::size_t cpus = static_cast<std::size_t>(libbpf_num_possible_cpus());
  const std::size_t value = bpf_map__value_size(counts ? counts : flows), stride = (value + 7) / 8 * 8;
  std::vector<unsigned char> zero(cpus * stride);
  const std::uint64_t size = payload;
  for (std::size_t c = 0; c < cpus; ++c)
    std::memcpy(zero.data() + c * stride + value - sizeof(size), &size, sizeof(size));
  const nb_flow_key k = flow_key();
  const bool ok = counts ? bpf_map_update_elem(bpf_map__fd(counts), &slot, zero.data(), BPF_ANY) == 0 &&
                               bpf_map_update_elem(bpf_map__fd(flows), &k, &slot, BPF_NOEXIST) == 0
                         : bpf_map_update_elem(bpf_map__fd(flows), &k, zero.data(), BPF_NOEXIST) == 0;
  if (!ok) throw std::runtime_error(fmt::format("cannot add the flow: {}", std::strerror(errno)));
}

// The packets counted, over the CPUs; a previous counter's value started with its packets too.
std::uint64_t counted(bpf_object* obj, std::uint32_t slot = 0) {
  bpf_map* flows = bpf_object__find_map_by_name(obj, "flows");
  bpf_map* counts = bpf_object__find_map_by_name(obj, "counts");
  if (!flows) return 0;
  const std::size_t cpus = static_cast<std::size_t>(libbpf_num_possible_cpus());
  const std::size_t value = bpf_map__value_size(counts ? counts : flows);
  std::vector<unsigned char> per_cpu(cpus * ((value + 7) / 8 * 8));
  const nb_flow_key k = flow_key();
  const int r = counts ? bpf_map_lookup_elem(bpf_map__fd(counts), &slot, per_cpu.data())
                       : bpf_map_lookup_elem(bpf_map__fd(flows), &k, per_cpu.data());
  if (r < 0) return 0;
  std::uint64_t n = 0;
  for (std::size_t c = 0; c < cpus; ++c) {
    std::uint64_t packets;
    std::memcpy(&packets, per_cpu.data() + c * ((value + 7) / 8 * 8), sizeof(packets));
    n += packets;
  }
  return n;
}

std::uint32_t run_frames(int prog, std::vector<unsigned char>& frame, std::uint32_t runs) {
  bpf_test_run_opts opts{};
  opts.sz = sizeof(opts);
  opts.data_in = frame.data();
  opts.data_size_in = static_cast<__u32>(frame.size());
  opts.repeat = runs;
  if (bpf_prog_test_run_opts(prog, &opts) < 0)
    throw std::runtime_error(fmt::format("BPF_PROG_RUN: {}", std::strerror(errno)));
  return opts.retval;
}

// netserve's remove_flow and add_flow of one flow, at the program: once removed, no CPU counts it through the
// flow it remembers; re-added in another slot, it counts there only.
void check_reuse(bpf_object* obj, int prog, std::vector<unsigned char>& frame, std::size_t payload) {
  bpf_map *flows = bpf_object__find_map_by_name(obj, "flows"), *bss = nullptr, *m = nullptr;
  bpf_object__for_each_map(m, obj) if (std::string_view(bpf_map__name(m)).ends_with(".bss")) bss = m;
  if (!flows || !bss || bpf_map__value_size(bss) != sizeof(std::uint32_t))
    throw std::runtime_error("--reuse: not netserve's counter (flows, and a .bss of its flow generation only)");
  const auto fail = [](const std::string& what) { throw std::runtime_error("--reuse: " + what); };
  if (run_frames(prog, frame, 1000) != XDP_DROP || counted(obj, 0) != 1000) fail("a registered flow not counted");
  const nb_flow_key k = flow_key();
  const std::uint32_t zero = 0, generation = 1;
  bpf_map_delete_elem(bpf_map__fd(flows), &k);
  bpf_map_update_elem(bpf_map__fd(bss), &zero, &generation, BPF_ANY);
  if (run_frames(prog, frame, 1000) != XDP_PASS || counted(obj, 0) != 1000) fail("a removed flow still counted");
  add_flow(obj, payload, 1);
  if (run_frames(prog, frame, 1000) != XDP_DROP || counted(obj, 1) != 1000 || counted(obj, 0) != 1000)
    fail("a flow added again not counted in its new slot alone");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xdp_cost: ns per frame of an XDP program, by BPF_PROG_RUN (no device, no frames sent)"};
  std::string object;
  std::uint32_t repeat = 10'000'000;
  std::size_t payload = 18;
  app.add_option("object", object, "count.bpf.o (netserve's counter) or drop.bpf.o")->required();
  app.add_option("--repeat", repeat, "runs");
  app.add_option("-m,--payload", payload, "UDP payload bytes")->check(CLI::Range(16, 1472));
  bool reuse = false;
  app.add_flag("--reuse", reuse, "instead: check that a flow removed and added again counts in its new slot only");
  CLI11_PARSE(app, argc, argv);
  try {
    bpf_object* obj = bpf_object__open_file(object.c_str(), nullptr);
    if (!obj) throw std::runtime_error(fmt::format("{}: {}", object, std::strerror(errno)));
    if (bpf_object__load(obj) < 0) throw std::runtime_error(fmt::format("{}: the kernel refused it", object));
    add_flow(obj, payload);
    std::vector<unsigned char> frame = udp_frame(payload);
    bpf_program* prog = bpf_object__next_program(obj, nullptr);
    if (reuse) {
      check_reuse(obj, bpf_program__fd(prog), frame, payload);
      fmt::print("{{\"reuse\":\"ok\"}}\n");
      bpf_object__close(obj);
      return 0;
    }
    bpf_test_run_opts opts{};
    opts.sz = sizeof(opts);
    opts.data_in = frame.data();
    opts.data_size_in = static_cast<__u32>(frame.size());
    opts.repeat = repeat;
    if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts) < 0)
      throw std::runtime_error(fmt::format("BPF_PROG_RUN: {}", std::strerror(errno)));
    const std::uint64_t n = counted(obj);
    fmt::print("{{\"program\":\"{}\",\"ns_per_frame\":{},\"retval\":{},\"runs\":{},\"counted\":{}}}\n",
               bpf_program__name(prog), opts.duration, opts.retval, repeat, n);
    bpf_object__close(obj);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "xdp_cost: {}\n", e.what());
    return 1;
  }
}
