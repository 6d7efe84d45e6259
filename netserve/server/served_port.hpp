#pragma once
// What the ports of one netserve share: its options, each port's tests, the budgets and logs.
#include "core/base/limits.hpp"
#include "core/wire/native/frame_io.hpp"
#include "netserve/server/log_limiter.hpp"
#include "netserve/server/own_sockets.hpp"
#include "netserve/server/served_test.hpp"
#include "netserve/server/server_budget.hpp"
#include "netserve/server/udp_port.hpp"
#include "netserve/server/xdp_engine.hpp"

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nb::serve {

// Bounds of the operator's limits, checked at parse: 64-bit nanosecond instants stay far from overflow.
inline constexpr double max_duration_bound_s = 1e7;
inline constexpr std::uint32_t max_streams_bound = 1024;
inline constexpr double max_start_lead_bound_s = 600;  // the harness's bound on a plan's lead

struct server_options {
  std::vector<std::uint16_t> ports;  // 0: any free port, the same for TCP and UDP
  std::string bind = "0.0.0.0";
  double max_duration_s = 3600;
  std::uint32_t max_streams = max_streams_per_test;
  std::uint32_t max_tests_per_port = 64;
  // Bounds what a parked test holds (docs/netserve.md#budget).
  double max_start_lead_s = nb::max_start_lead_s;
  budget_limits budget;
  int rcvbuf = 0;  // per UDP lane; 0: default_rcvbuf
  // With CAP_NET_ADMIN rmem_max does not apply: a client could pin 2 GiB per socket.
  int max_socket_buffer = 32 << 20;
  std::vector<int> rx_cpus{-1};  // a UDP lane per CPU; {-1}: one socket, placed by the scheduler
  bool gro = true;
  double drain_quiet_s = 0.1;  // after the client's end: quiet this long, queues empty
  double drain_max_s = 2.0;
  double first_message_timeout_s = 5;
  double netperf_idle_max_s = 30;   // outside its tests, in all
  std::string psk;                  // non-empty: every connection must answer a challenge
  std::shared_ptr<xdp_engine> xdp;  // null: the socket engine
};

// Why these sizes: docs/netserve.md#receive-lanes
constexpr int default_rcvbuf(std::size_t lanes) {
  return std::max<int>(4 << 20, static_cast<int>((32u << 20) / std::max<std::size_t>(lanes, 1)));
}

class iperf3_session;

// Shared with its connections: at shutdown they are destroyed after the server, and still unregister.
struct served_port {
  std::uint16_t number = 0;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::shared_ptr<udp_port> udp;
  std::map<std::string, std::shared_ptr<served_test>> tests;  // by cookie
  std::map<std::string, std::uint64_t> tests_of_client;       // by client_of
  std::map<std::string, iperf3_session*> iperf3_sessions;     // by cookie
  std::uint64_t netperf_tests = 0;                            // their data is on sockets of their own
  std::map<std::string, std::uint64_t> netperf_controls_of_client;

  // What the port's test slots limit, whoever the clients.
  std::size_t running() const noexcept { return tests.size() + netperf_tests; }

  // False when the cookie is another test's: the end of either would remove the other.
  [[nodiscard]] bool add(std::shared_ptr<served_test> test, const std::string& client);
  // Never another test that came under its cookie.
  void remove(const served_test& test, const std::string& client) noexcept;
};

// Shared with every connection, as the ports are.
struct server_shared {
  server_options options;
  std::shared_ptr<budget> process_budget;
  std::uint64_t tests_registered = 0;
  std::shared_ptr<per_client_count> first_message_window = per_client_count::create(first_message_window_per_client);
  std::shared_ptr<own_sockets> own_ports = std::make_shared<own_sockets>();
  log_limiter peer_log{peer_log_per_second, peer_log_burst};
};

}  // namespace nb::serve
