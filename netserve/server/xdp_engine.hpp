#pragma once
// netserve's XDP receive engine (--engine xdp --interface DEV): an XDP program on DEV (netserve/xdp/
// count.bpf.c) counts each forward UDP test's datagrams per flow at the driver, before the receiving host's
// stack can lose them, and drops them (or passes them on: --xdp-pass, so the socket path counts them too).
// That is the figure a circuit test is after: what crossed the circuit, not what one host's sockets kept up
// with. Every other frame passes untouched.
//
// Attachment: a BPF link, which the kernel detaches when its last descriptor closes, so no crash of
// netserve (kill -9 included) leaves the program attached. A kernel without XDP links (before 5.9) gets the
// netlink attachment instead, which outlives the process: the next netserve on DEV finds the program by its
// name and detaches it before attaching its own.
#include "core/sys/endpoint.hpp"
#include "core/wire/native/flow.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace nb::serve {

struct xdp_options {
  std::string interface;      // where the tests' datagrams arrive
  bool pass = false;          // pass counted datagrams on to the stack (the socket engine counts them too)
  std::string mode = "auto";  // "native" (driver), "generic" (skb), "auto": native where the driver can
};

class xdp_engine {
 public:
  // Whether this netserve was built with the engine (clang, bpftool and libbpf-dev at build time).
  static bool built_in() noexcept;

  // Loads the program and attaches it to the interface. Throws std::runtime_error in one line: not root,
  // no such interface, another XDP program already there, the mode asked for not offered, not built in.
  explicit xdp_engine(const xdp_options& options);
  ~xdp_engine();
  xdp_engine(const xdp_engine&) = delete;
  xdp_engine& operator=(const xdp_engine&) = delete;

  // "xdp-native" or "xdp-generic": how the program really runs, as results name it.
  const std::string& name() const noexcept;
  const std::string& interface() const noexcept;
  bool pass() const noexcept;

  // Starts counting the datagrams from `source` to local port `port` (counters from zero), each of
  // `message_size` bytes (a frame carrying more is a batch of them). Throws std::runtime_error when the
  // flow is already counted or the table is full.
  void add_flow(const endpoint& source, std::uint16_t port, std::uint32_t message_size);
  void remove_flow(const endpoint& source, std::uint16_t port) noexcept;
  // The flow's counts so far, over every CPU, arrival times on the wall clock. No jitter: the program
  // keeps none. Zero counts for a flow not registered.
  flow_totals read_flow(const endpoint& source, std::uint16_t port) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace nb::serve
