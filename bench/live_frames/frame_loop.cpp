#include "frame_loop.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "lf_loop.skel.h"
#pragma GCC diagnostic pop

namespace {

int index_of(const std::string& dev) {
  const int i = static_cast<int>(if_nametoindex(dev.c_str()));
  if (i == 0) throw std::runtime_error(fmt::format("{}: no such interface", dev));
  return i;
}

// Links close with the process, whatever ends it: nothing of the loop outlives live_frames.
struct loop_programs {
  lf_loop* skel = nullptr;
  bpf_link* bounce = nullptr;
  bpf_link* fanout = nullptr;
  ~loop_programs() {
    bpf_link__destroy(fanout);
    bpf_link__destroy(bounce);
    if (skel) lf_loop::destroy(skel);
  }
};

void fill_out(const loop_programs& p, const loop_options& o) {
  const int fd = bpf_map__fd(p.skel->maps.out);
  const auto put = [&](std::uint32_t key, std::uint32_t ifindex) {
    if (bpf_map_update_elem(fd, &key, &ifindex, BPF_ANY) < 0)
      throw std::runtime_error(fmt::format("devmap entry {}: {}", key, std::strerror(errno)));
  };
  put(0, static_cast<std::uint32_t>(index_of(o.fanout)));  // round on: back to `bounce`
  for (std::uint32_t i = 1; i <= o.copies; ++i) put(i, static_cast<std::uint32_t>(index_of(o.out)));
}

void inject(const loop_options& o, const std::vector<unsigned char>& frame) {
  const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(fmt::format("AF_PACKET socket: {}", std::strerror(errno)));
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = index_of(o.bounce);
  to.sll_halen = ETH_ALEN;
  std::memcpy(to.sll_addr, frame.data(), ETH_ALEN);
  for (std::uint32_t i = 0; i < o.seeds; ++i)
    if (::sendto(fd, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) < 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(fmt::format("seeding the loop on {}: {}", o.bounce, std::strerror(err)));
    }
  ::close(fd);
}

}  // namespace

double run_frame_loop(const loop_options& o, const std::vector<unsigned char>& frame, const std::atomic<bool>& stop) {
  if (o.copies < 1 || o.copies >= 16) throw std::invalid_argument("--copies: 1 to 15");
  loop_programs p;
  p.skel = lf_loop::open();
  if (!p.skel) throw std::runtime_error(fmt::format("cannot open the loop program: {}", std::strerror(errno)));
  p.skel->rodata->write_seq = o.write_seq ? 1 : 0;
  if (lf_loop::load(p.skel) < 0) throw std::runtime_error("the kernel refused the loop program (root?)");
  fill_out(p, o);
  p.bounce = bpf_program__attach_xdp(p.skel->progs.lf_bounce, index_of(o.bounce));
  p.fanout = bpf_program__attach_xdp(p.skel->progs.lf_fanout, index_of(o.fanout));
  if (!p.bounce || !p.fanout)
    throw std::runtime_error(fmt::format("cannot attach the loop to {} and {}", o.bounce, o.fanout));
  const auto start = std::chrono::steady_clock::now();
  inject(o, frame);
  const auto end = start + std::chrono::duration<double>(o.seconds);
  while (!stop && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  p.skel->bss->stop = 1;
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the frames in flight die
  return took;
}
