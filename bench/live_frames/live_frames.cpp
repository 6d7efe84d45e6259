// live_frames: the bench's reference UDP load, sent at the driver by BPF_PROG_RUN in live-frames mode (the
// technique of xdp-tools' xdp-trafficgen). One frame built here, turned around by tx.bpf.c on one CPU for a
// bounded time; what the driver accepted and refused comes from its own counters (veth: ethtool -S).
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/sockios.h>
#include <linux/udp.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "lf_tx.skel.h"
#pragma GCC diagnostic pop

#include "frame_loop.hpp"
#include "udp_frame.hpp"

namespace {

constexpr std::size_t seq_header_size = 16;  // netload's payload header: sequence number, send time

std::atomic<bool> stop_requested{false};

struct options {
  std::string dev, dst_mac, src_ip, dst_ip;
  std::uint16_t sport = 9, dport = 0;
  std::size_t payload = 18;
  double seconds = 5;
  std::uint32_t batch = 64;
  std::vector<std::string> loop;  // BOUNCE FANOUT: the frame loop instead of live frames
  loop_options loop_opts;
};

std::array<unsigned char, ETH_ALEN> parse_mac(const std::string& s) {
  std::array<unsigned int, ETH_ALEN> v{};
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != ETH_ALEN)
    throw std::invalid_argument(fmt::format("--dst-mac: '{}' is not a MAC address", s));
  std::array<unsigned char, ETH_ALEN> mac{};
  std::transform(v.begin(), v.end(), mac.begin(), [](unsigned int b) { return static_cast<unsigned char>(b); });
  return mac;
}

in_addr parse_ipv4(const std::string& s, const char* what) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) throw std::invalid_argument(fmt::format("{}: '{}' is not IPv4", what, s));
  return a;
}

// One socket for the device's ioctls (MAC, ethtool counters).
struct ioctl_socket {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ~ioctl_socket() { ::close(fd); }
  void call(const std::string& dev, unsigned long request, void* data, ifreq& ifr) const {
    std::strncpy(ifr.ifr_name, dev.c_str(), IFNAMSIZ - 1);
    if (data) ifr.ifr_data = static_cast<char*>(data);
    if (::ioctl(fd, request, &ifr) < 0)
      throw std::runtime_error(fmt::format("{}: ioctl: {}", dev, std::strerror(errno)));
  }
};

std::vector<unsigned char> build_frame(const options& o, const ioctl_socket& sock) {
  auto f = lf::udp4_frame(parse_ipv4(o.src_ip, "--src-ip").s_addr, parse_ipv4(o.dst_ip, "--dst-ip").s_addr, o.sport,
                          o.dport, o.payload);
  auto* eth = reinterpret_cast<ethhdr*>(f.data());
  const auto dst = parse_mac(o.dst_mac);
  std::memcpy(eth->h_dest, dst.data(), ETH_ALEN);
  ifreq ifr{};
  sock.call(o.dev, SIOCGIFHWADDR, nullptr, ifr);
  std::memcpy(eth->h_source, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
  return f;
}

// The device's frames accepted and refused by its ndo_xdp_xmit, summed over its queues (veth's names).
struct xmit_counts {
  std::uint64_t accepted = 0, refused = 0;
};

xmit_counts read_xmit(const std::string& dev, const ioctl_socket& sock) {
  std::vector<unsigned char> info_buf(sizeof(ethtool_sset_info) + sizeof(__u32));
  auto* info = reinterpret_cast<ethtool_sset_info*>(info_buf.data());
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = 1ULL << ETH_SS_STATS;
  ifreq ifr{};
  sock.call(dev, SIOCETHTOOL, info, ifr);
  const __u32 n = info->sset_mask ? info->data[0] : 0;
  std::vector<unsigned char> names_buf(sizeof(ethtool_gstrings) + std::size_t{n} * ETH_GSTRING_LEN);
  auto* names = reinterpret_cast<ethtool_gstrings*>(names_buf.data());
  names->cmd = ETHTOOL_GSTRINGS;
  names->string_set = ETH_SS_STATS;
  names->len = n;
  sock.call(dev, SIOCETHTOOL, names, ifr);
  std::vector<unsigned char> stats_buf(sizeof(ethtool_stats) + std::size_t{n} * sizeof(__u64));
  auto* stats = reinterpret_cast<ethtool_stats*>(stats_buf.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = n;
  sock.call(dev, SIOCETHTOOL, stats, ifr);
  static const std::regex accepted("tx_queue_[0-9]+_xdp_xmit"), refused("tx_queue_[0-9]+_xdp_xmit_errors");
  xmit_counts c;
  for (__u32 i = 0; i < n; ++i) {
    std::string name(reinterpret_cast<const char*>(names->data) + std::size_t{i} * ETH_GSTRING_LEN);
    if (std::regex_match(name, accepted)) c.accepted += stats->data[i];
    if (std::regex_match(name, refused)) c.refused += stats->data[i];
  }
  return c;
}

// Root and still EPERM: the kernel is built or patched to refuse BPF_F_TEST_XDP_LIVE_FRAMES.
struct live_frames_refused {};
constexpr int exit_refused = 3;

struct run_result {
  std::uint64_t offered = 0;
  double seconds = 0;
};

// Calls of up to 2^20 frames (each call sets up its frame pool), sized so the last ends near the deadline.
run_result run(lf_tx* skel, const options& o, std::vector<unsigned char>& frame, int ifindex) {
  xdp_md ctx{};
  ctx.data_end = static_cast<__u32>(frame.size());
  ctx.ingress_ifindex = static_cast<__u32>(ifindex);  // XDP_TX leaves by this device
  bpf_test_run_opts opts{};
  opts.sz = sizeof(opts);
  opts.data_in = frame.data();
  opts.data_size_in = static_cast<__u32>(frame.size());
  opts.ctx_in = &ctx;
  opts.ctx_size_in = sizeof(ctx);
  opts.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
  opts.batch_size = o.batch;
  const int prog = bpf_program__fd(skel->progs.lf_tx);
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto end = start + std::chrono::duration<double>(o.seconds);
  run_result r;
  double rate = 1e6;  // frames per second, until measured
  for (auto now = start; now < end && !stop_requested; now = clock::now()) {
    const double left = std::chrono::duration<double>(end - now).count();
    opts.repeat = static_cast<__u32>(std::clamp(rate * left, 1024.0, double{1 << 20}));
    if (bpf_prog_test_run_opts(prog, &opts) < 0) {
      const int err = errno;
      if (err == EPERM && r.offered == 0) throw live_frames_refused{};
      throw std::runtime_error(fmt::format("BPF_PROG_RUN (live frames) on {}: {}", o.dev, std::strerror(err)));
    }
    r.offered += opts.repeat;
    const double took = std::chrono::duration<double>(clock::now() - now).count();
    if (took > 0) rate = opts.repeat / took;
  }
  r.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return r;
}

run_result send_live(const options& o, std::vector<unsigned char>& frame, int ifindex) {
  lf_tx* skel = lf_tx::open();
  if (!skel) throw std::runtime_error(fmt::format("cannot open the program: {}", std::strerror(errno)));
  skel->rodata->write_seq = o.payload >= seq_header_size ? 1 : 0;
  if (lf_tx::load(skel) < 0) throw std::runtime_error("the kernel refused the program (root?)");
  try {
    const run_result r = run(skel, o, frame, ifindex);
    lf_tx::destroy(skel);
    return r;
  } catch (...) {
    lf_tx::destroy(skel);
    throw;
  }
}

nlohmann::json report(const options& o, std::size_t frame_bytes, const run_result& r, const xmit_counts& before,
                      const xmit_counts& after) {
  const std::uint64_t accepted = after.accepted - before.accepted;
  return {{"dev", o.dev},
          {"mode", o.loop.empty() ? "live-frames" : "loop"},
          {"frame_bytes", frame_bytes},
          {"seconds", r.seconds},
          {"offered", r.offered},
          {"accepted", accepted},
          {"refused", after.refused - before.refused},
          {"offered_pps", static_cast<double>(r.offered) / r.seconds},
          {"accepted_pps", static_cast<double>(accepted) / r.seconds}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "live_frames: UDP frames sent at the driver (BPF_PROG_RUN live frames, XDP_TX; or a frame loop), "
      "bounded in time"};
  options o;
  app.add_option("-i,--dev", o.dev, "the interface the frames leave by")->required();
  app.add_option("--dst-mac", o.dst_mac, "the next hop's MAC")->required();
  app.add_option("--src-ip", o.src_ip, "IPv4 source")->required();
  app.add_option("--dst-ip", o.dst_ip, "IPv4 destination")->required();
  app.add_option("--sport", o.sport, "UDP source port");
  app.add_option("--dport", o.dport, "UDP destination port")->required();
  app.add_option("-m,--payload", o.payload, "UDP payload bytes (>= 16: netload's sequence header)")
      ->check(CLI::Range(0, 1472));
  app.add_option("-s,--seconds", o.seconds, "how long to send")->check(CLI::Range(0.1, 60.0));
  app.add_option("--batch", o.batch, "frames per batch inside a call")->check(CLI::Range(1, 256));
  app.add_option("--loop", o.loop, "BOUNCE FANOUT: a veth pair to circle frames on (frame loop, not live frames)")
      ->expected(2);
  app.add_option("--copies", o.loop_opts.copies, "--loop: copies out of --dev per round")->check(CLI::Range(1, 15));
  app.add_option("--seeds", o.loop_opts.seeds, "--loop: frames in the loop")->check(CLI::Range(1, 200));
  CLI11_PARSE(app, argc, argv);
  try {
    std::signal(SIGINT, [](int) { stop_requested = true; });
    std::signal(SIGTERM, [](int) { stop_requested = true; });
    const int ifindex = static_cast<int>(if_nametoindex(o.dev.c_str()));
    if (ifindex == 0) throw std::runtime_error(fmt::format("{}: no such interface", o.dev));
    ioctl_socket sock;
    std::vector<unsigned char> frame = build_frame(o, sock);
    const xmit_counts before = read_xmit(o.dev, sock);
    run_result r;
    if (o.loop.empty()) {
      r = send_live(o, frame, ifindex);
    } else {
      loop_options l = o.loop_opts;
      l.bounce = o.loop[0];
      l.fanout = o.loop[1];
      l.out = o.dev;
      l.seconds = o.seconds;
      l.write_seq = o.payload >= seq_header_size;
      r.seconds = run_frame_loop(l, frame, stop_requested);
    }
    const xmit_counts after = read_xmit(o.dev, sock);
    if (!o.loop.empty()) r.offered = after.accepted + after.refused - before.accepted - before.refused;
    const nlohmann::json out = report(o, frame.size(), r, before, after);
    fmt::print("{}\n", out.dump());
    return 0;
  } catch (const live_frames_refused&) {
    fmt::print(stderr,
               "live_frames: this kernel refuses BPF_PROG_RUN in live-frames mode (EPERM as root); "
               "BPF_F_TEST_XDP_LIVE_FRAMES needs Linux >= 5.18 without a patch that disables it\n");
    return exit_refused;
  } catch (const std::exception& e) {
    fmt::print(stderr, "live_frames: {}\n", e.what());
    return 1;
  }
}
