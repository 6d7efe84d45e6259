#pragma once
// The data of one stock netperf client's test, on the socket netserve told it to use (netperf names its
// data port in the response to its request, as netserver does): a thread of its own receives a STREAM
// test's data or answers an RR test's requests, with netserver's rules for the end: a UDP test ends at
// the client's zero-length datagram, a TCP one at its close, either at the test's length plus netperf's
// padding at the latest. Only the control connection's client address is served: anything else that
// reaches the port is neither counted nor answered, and neither is a datagram from one of netserve's own
// sockets (a client on this host could aim netserve's own streams or answers at the port).
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
  std::uint32_t request_size = 1, response_size = 1;  // RR: each transaction's sizes
  std::uint32_t receive_size = 0;                     // STREAM, TCP: bytes per recv() (0: 128 KiB)
  endpoint peer;                                      // the client's address (the port is not compared)
  bool peer_local = false;                            // the client's address is this host's: own sockets checked
  std::shared_ptr<const own_sockets> own;             // netserve's own sockets (peer_local)
  std::int64_t deadline_mono_ns = 0;                  // the test's length and netperf's padding from its start
};

// Kept 64-bit here; netperf's own (32-bit) fields get them saturated (core/wire/netperf/netperf_wire.hpp).
struct netperf_counts {
  std::uint64_t bytes_received = 0, recv_calls = 0, bytes_sent = 0, send_calls = 0, transactions = 0;
  std::uint64_t failed_sends = 0;
  std::uint64_t foreign = 0;   // datagrams or connections from another address, ignored
  std::uint64_t from_own = 0;  // datagrams from one of netserve's own sockets, ignored
  std::int64_t elapsed_ns = 0;
  bool timed_out = false;  // ended by the deadline, not by the client
  std::string error;       // the data socket failed
};

class netperf_data {
 public:
  // `socket`: bound (UDP) or listening (TCP), on the port the client was told. The thread starts now.
  netperf_data(fd_handle socket, netperf_plan plan);
  ~netperf_data();  // stops the thread (within 100 ms) and joins it
  netperf_data(const netperf_data&) = delete;
  netperf_data& operator=(const netperf_data&) = delete;

  bool done() const noexcept { return done_.load(std::memory_order_acquire); }
  void stop() noexcept { stop_.store(true, std::memory_order_relaxed); }
  // Once done().
  const netperf_counts& counts() const noexcept { return counts_; }

 private:
  void run() noexcept;
  // Waits until `fd` is readable (POLLIN) or writable; false at the deadline or a stop.
  bool wait_for(int fd, short events);
  void udp_stream();
  void udp_rr();
  int accept_client();  // -1: none came
  void tcp_stream(int fd);
  void tcp_rr(int fd);
  // Counts a datagram or connection from `address` that is not the client's (another address, or one of
  // netserve's own sockets); true when it is the client's.
  bool admit(const void* address) noexcept;

  fd_handle socket_;
  netperf_plan plan_;
  netperf_counts counts_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: it runs on everything above
};

}  // namespace nb::serve
