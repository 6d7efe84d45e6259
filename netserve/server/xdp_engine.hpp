#pragma once
// --engine xdp: an XDP program on DEV (netserve/xdp/count.bpf.c) counts forward UDP per flow at the driver,
// before the host's stack can lose it: what crossed the circuit. docs/netserve.md#xdp-engine
#include "core/sys/endpoint.hpp"
#include "core/wire/native/flow.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace nb::serve {

struct xdp_options {
  std::string interface;
  bool pass = false;          // on to the stack, which counts them too
  std::string mode = "auto";  // "native", "generic" (skb); "auto": native where the driver can
};

class xdp_engine {
 public:
  static bool built_in() noexcept;

  // Throws std::runtime_error in one line: not root, no such interface, another XDP program there...
  explicit xdp_engine(const xdp_options& options);
  ~xdp_engine();
  xdp_engine(const xdp_engine&) = delete;
  xdp_engine& operator=(const xdp_engine&) = delete;

  // How it really runs: "xdp-native", "xdp-generic".
  const std::string& name() const noexcept;
  const std::string& interface() const noexcept;
  bool pass() const noexcept;

  // A frame of more than `message_size` is a batch. Throws std::runtime_error: counted already, table full.
  void add_flow(const endpoint& source, std::uint16_t port, std::uint32_t message_size);
  void remove_flow(const endpoint& source, std::uint16_t port) noexcept;
  // Over every CPU, wall-clock arrivals, no jitter; zero for a flow not registered.
  flow_totals read_flow(const endpoint& source, std::uint16_t port) const;
  // How far last_arrival_ns may trail the flow's true last frame: the program stamps once a jiffy (a tick,
  // 10 ms at the coarsest HZ).
  static constexpr std::int64_t stamp_lag_ns = 10'000'000;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace nb::serve
