#pragma once
// One UDP data socket per port, shared by every test on that port. A receive thread runs while any test
// is attached and attributes each datagram to its test by source address (a 1-byte datagram has no room
// for a header). The flow table is copied to the thread only when it changes (a generation number is
// checked once per batch), so the per-datagram path takes no lock.
#include "core/endpoint.hpp"
#include "core/flow.hpp"
#include "core/socket.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nb::serve {

// The flows of one UDP test: one per client stream (its source port), each counted on its own.
struct udp_flows {
  explicit udp_flows(std::vector<endpoint> from) : sources(std::move(from)), counters(sources.size()) {}
  std::vector<endpoint> sources;
  std::vector<recv_counters> counters;
  std::uint32_t drops_at_attach = 0;  // the socket's drop counter (32-bit in the kernel) when attached
  std::uint64_t attach_serial = 0;
  bool shared_at_attach = false;
};

class udp_port {
 public:
  udp_port(fd_handle fd, bool gro);
  ~udp_port();
  udp_port(const udp_port&) = delete;
  udp_port& operator=(const udp_port&) = delete;

  int fd() const noexcept { return fd_.get(); }
  void attach(const std::shared_ptr<udp_flows>& flows);
  void detach(const std::shared_ptr<udp_flows>& flows);
  // Datagrams the socket dropped since `flows` attached, and whether another test was attached meanwhile.
  std::uint64_t drops_since(const udp_flows& flows, bool& shared) const;
  std::uint64_t unattributed() const noexcept { return unattributed_.get(); }
  // Bytes waiting in the socket's receive queue (0 once drained).
  int queued_bytes() const noexcept;
  std::string batching() const { return gro_ ? "gro" : "recvmmsg"; }

 private:
  struct entry {
    endpoint source;
    recv_counters* counters;
    std::shared_ptr<udp_flows> owner;  // keeps the counters alive while the thread's copy uses them
  };
  void run();
  bool refresh(std::vector<entry>& local, std::uint64_t& seen);

  fd_handle fd_;
  bool gro_;
  std::mutex mu_;
  std::vector<entry> table_;
  std::atomic<std::uint64_t> generation_{0};
  std::uint64_t attach_serial_ = 0;
  bool running_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  relaxed<std::uint64_t> unattributed_;
};

}  // namespace nb::serve
