#pragma once
// One stock netperf test's data on its own socket and thread, with netserver's rules for the end; only
// the control connection's address is served. docs/serving-stock-clients.md#the-data
#include "core/base/fd.hpp"
#include "core/sys/endpoint.hpp"
#include "netserve/server/own_sockets.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace nb::serve {

struct netperf_plan {
  bool udp = true;
  bool rr = false;
  std::uint32_t request_size = 1, response_size = 1;  // RR
  std::uint32_t receive_size = 0;                     // TCP_STREAM, per recv(); 0: 128 KiB
  endpoint peer;                                      // its port is not compared
  bool peer_local = false;                            // then datagrams from `own` are refused
  std::shared_ptr<const own_sockets> own;
  std::int64_t deadline_mono_ns = 0;  // its length and netperf's padding
};

// 64-bit; netperf's 32-bit fields get them saturated.
struct netperf_counts {
  std::uint64_t bytes_received = 0, recv_calls = 0, bytes_sent = 0, send_calls = 0, transactions = 0;
  std::uint64_t failed_sends = 0;
  std::uint64_t foreign = 0;   // from another address, ignored
  std::uint64_t from_own = 0;  // from netserve's own sockets, ignored
  std::int64_t elapsed_ns = 0;
  bool timed_out = false;  // ended by the deadline, not by the client
  std::string error;
};

class netperf_data {
 public:
  // `socket`: bound (UDP) or listening (TCP). The thread starts now.
  netperf_data(fd_handle socket, netperf_plan plan);
  ~netperf_data();  // within 100 ms
  netperf_data(const netperf_data&) = delete;
  netperf_data& operator=(const netperf_data&) = delete;

  bool done() const noexcept { return done_.load(std::memory_order_acquire); }
  void stop() noexcept { stop_.store(true, std::memory_order_relaxed); }
  // Once done().
  const netperf_counts& counts() const noexcept { return counts_; }

 private:
  void run() noexcept;
  // False at the deadline or a stop.
  bool wait_for(int fd, short events);
  void udp_stream();
  void udp_rr();
  int accept_client();  // -1: none came
  void tcp_stream(int fd);
  void tcp_rr(int fd);
  // True for the client's; counts what is not.
  bool admit(const void* address) noexcept;

  fd_handle socket_;
  netperf_plan plan_;
  netperf_counts counts_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: it uses everything above
};

}  // namespace nb::serve
