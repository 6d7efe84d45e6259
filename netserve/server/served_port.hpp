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

// The bounds of the operator's own limits (netserve/main.cpp checks them at parse): within them every
// instant and deadline netserve computes in 64-bit nanoseconds stays far from overflow (wall clock
// ~1.8e18 ns now; 1e7 s is 1e16 ns), and no request can make it allocate beyond what the budget allows.
inline constexpr double max_duration_bound_s = 1e7;  // about 115 days
inline constexpr std::uint32_t max_streams_bound = 1024;
inline constexpr double max_start_lead_bound_s = 600;  // the harness's own bound on a plan's lead

struct server_options {
  std::vector<std::uint16_t> ports;  // 0 = any free port (TCP and UDP get the same number)
  std::string bind = "0.0.0.0";
  double max_duration_s = 3600;
  std::uint32_t max_streams = max_streams_per_test;
  std::uint32_t max_tests_per_port = 64;
  // A start instant further ahead is refused: a registered test holds its slot and its budget until its
  // start and beyond, so a client could park them. netserve already gives a client 30 s to send its
  // start; the harness sends T0 `lead` seconds ahead (0.5-5 s in the shipped plans), netload --start-at
  // at once. 30 s covers both with room, and bounds what an idle client holds to about a minute.
  double max_start_lead_s = nb::max_start_lead_s;
  budget_limits budget;  // process-wide, with a share per client address
  int rcvbuf = 0;        // receive buffer of every UDP lane socket; 0: default_rcvbuf
  // A client's socket buffer request (netperf's -s/-S) is granted up to this. netserve usually holds
  // CAP_NET_ADMIN, with which the kernel's rmem_max/wmem_max do not apply (SO_RCVBUFFORCE): a client could
  // otherwise pin 2 GiB of kernel memory per socket, and a UDP port's shared buffers only ever grow.
  int max_socket_buffer = 32 << 20;
  // One UDP socket and receive thread per CPU listed, for every port (see udp_port.hpp). One entry of
  // -1: a single socket whose thread the scheduler places.
  std::vector<int> rx_cpus{-1};
  bool gro = true;
  double drain_quiet_s = 0.1;          // after the client's end: quiet this long and the queue empty
  double drain_max_s = 2.0;            // ... or give up waiting after this long
  double first_message_timeout_s = 5;  // a connection that says nothing is closed after this
  double netperf_idle_max_s = 30;      // a netperf control connection's time outside its tests, in all
  std::string psk;                     // non-empty: every connection must answer a challenge with it
  // Forward UDP counted at the driver by an XDP program (--engine xdp); null: the socket engine.
  std::shared_ptr<xdp_engine> xdp;
};

// 32 MiB per port shared by its lanes, at least 4 MiB each: a lane sharing its core with a sender
// waits out a whole scheduler slice while the queue fills at tens of Gbit/s, and many lanes on a big
// machine should not multiply the memory a port can pin.
constexpr int default_rcvbuf(std::size_t lanes) {
  return std::max<int>(4 << 20, static_cast<int>((32u << 20) / std::max<std::size_t>(lanes, 1)));
}

class iperf3_session;  // netserve/iperf3/iperf3_session.hpp

// One bound port and the tests registered on it. Shared with the connections it accepted: at shutdown
// io_context destroys suspended connections after the server is gone, and their clean-up unregisters.
struct served_port {
  std::uint16_t number = 0;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::shared_ptr<udp_port> udp;
  std::map<std::string, std::shared_ptr<served_test>> tests;  // by cookie: where data connections find theirs
  std::map<std::string, std::uint64_t> tests_of_client;       // by client_of(peer): its share of the port
  std::map<std::string, iperf3_session*> iperf3_sessions;     // by iperf3 cookie, from its first read to its end
  std::uint64_t netperf_tests = 0;  // stock netperf clients' tests: their data is on sockets of their own
  std::map<std::string, std::uint64_t> netperf_controls_of_client;  // netperf control connections, by client_of

  // Every test the port runs, whoever its client: what the port's test slots limit.
  std::size_t running() const noexcept { return tests.size() + netperf_tests; }

  // False, and nothing added, when its cookie is another test's: two tests under one key would count as
  // one against the port's slots, and the end of either would remove the other's.
  [[nodiscard]] bool add(std::shared_ptr<served_test> test, const std::string& client);
  // Only the test itself: never another that came under its cookie.
  void remove(const served_test& test, const std::string& client) noexcept;
};

// What the server shares with every connection it accepts, for the same reason as its ports.
struct server_shared {
  server_options options;
  std::shared_ptr<budget> process_budget;
  std::uint64_t tests_registered = 0;  // numbers the tests, for the ready message and the log
  // Connections in their first-message window, by client address (first_message_window_per_client).
  std::shared_ptr<per_client_count> first_message_window = per_client_count::create(first_message_window_per_client);
  // netserve's own sockets (its ports, netperf's data sockets) and the ports its tests send to on this
  // host: nothing it sends lands on one of its own (netserve/server/own_sockets.hpp).
  std::shared_ptr<own_sockets> own_ports = std::make_shared<own_sockets>();
  log_limiter peer_log{peer_log_per_second, peer_log_burst};  // lines a peer can cause (not results)
};

}  // namespace nb::serve
