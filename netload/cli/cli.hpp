#pragma once
// netload's command line: netperf's shape (global options, then "--", then test options), so the seed
// procedure's commands work by changing the program name, plus long options for everything netperf
// lacks.
#include "core/data/segmentation.hpp"
#include "core/policy/receive_mode.hpp"
#include "core/wire/native/protocol.hpp"
#include "netload/cli/search_options.hpp"

#include <boost/describe/class.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb::load {

// Which server netload drives: its own netserve, or a stock server it speaks the protocol of: iperf3 -s
// (netload/iperf3/iperf3_peer.hpp) or netperf's netserver (netload/netperf/netserver_peer.hpp), whose own counts become
// the receiver's.
enum class peer_kind { netserve, iperf3, netserver };

struct client_options {
  peer_kind peer = peer_kind::netserve;  // --peer
  std::string host = "127.0.0.1";
  std::uint16_t port = 12865;              // netperf's default control port
  std::string local_address;               // -L: bind control and data sockets to it, "" = the kernel's choice
  int family = 0;                          // AF_INET / AF_INET6 with -4 / -6, 0 = any
  test_kind kind = test_kind::tcp_stream;  // netperf's default test
  double duration_s = 10;
  std::uint32_t message_size = 0;  // 0 = default for the test (UDP 1472, TCP 1 MiB)
  std::int32_t local_buffer = 0;   // -s
  std::int32_t remote_buffer = 0;  // -S
  std::int32_t local_cpu = -1, remote_cpu = -1;
  bool local_cpu_util = false;               // -c: print this host's CPU use and service demand
  bool remote_cpu_util = false;              // -C: the same for the server's host
  std::uint32_t mss = 0;                     // --mss (TCP); netperf's -M is the receive size, recv_size
  char rate_units = 0;                       // -f: k m g bit/s, K M G byte/s (core/base/units.hpp); 0 = netload's own
  double omit_s = 0;                         // --omit: the first seconds, before -l's, left out of the rates
  std::string congestion;                    // -K (TCP): the congestion-control algorithm, both ends
  std::uint32_t recv_size = 0;               // --recv-size (TCP): the receiver's bytes per recv(), 0 = its default
  bool zerocopy = false;                     // --zerocopy (TCP): the sender uses MSG_ZEROCOPY
  bool send_copy = false;                    // --send-copy (TCP): the sender copies with send(), not sendfile()
  recv_mode receive = recv_mode::automatic;  // --recv-mode, --recv-copy, --recv-discard (TCP): how the receiver reads
  bool recv_copy = false;                    // the receiver copies the bytes out: `receive` as it was resolved when the
                                             // test connected (resolve_receive, netload/native/client.hpp)
  std::uint32_t response_size = 0;           // -- -r REQ,RESP (RR): the answer's bytes; the request's is message_size
  std::uint32_t burst = 0;                   // -- -b N, --burst N (RR): transactions in flight beyond the first
  double rate_bps = 0;                       // --rate, payload bits per second, all streams
  double pps = 0;                            // --pps, all streams
  double interval_s = 0;
  bool json = false;
  bool json_stream = false;
  std::optional<double> start_at;  // epoch seconds
  bool start_on_stdin = false;     // after the handshake: say "armed", read the start instant from stdin
  std::uint32_t streams = 1;
  bool reverse = false;
  bool bidir = false;  // --bidir: both directions at once, one start instant
  std::int32_t dscp = -1;
  gso_mode gso = gso_mode::automatic;  // --gso, --no-gso (UDP): GSO buffers or datagram by datagram
  bool send_gso = true;                // the sender uses GSO: `gso` as resolved for the route (resolve_gso)
  bool gro = true;
  std::size_t batch = 0;  // datagrams per system call, 0 = automatic
  double connect_timeout_s = 5;
  std::string psk_file;           // answer netserve's challenge with this file's key
  std::vector<std::string> argv;  // as given, for the result
  // --host-info: no test; this host's facts (core/host/host_info.hpp), then the clock service on stdin.
  bool host_info = false;
  std::vector<std::string> mtu_peers;  // --mtu-to: the peers whose path MTU the facts give
  search_options search;               // --search: a rate search instead of one test (netload/search/search_run.hpp)

  // Packets per second all streams together, from --pps or --rate; 0 = unlimited.
  double target_pps() const;
};
// The options a result echoes ("options" in the JSON), named as the members; options_json adds the test,
// the receive mode and the target rate.
BOOST_DESCRIBE_STRUCT(client_options, (),
                      (host, port, local_address, duration_s, message_size, local_buffer, remote_buffer, local_cpu,
                       remote_cpu, local_cpu_util, remote_cpu_util, mss, recv_size, omit_s, rate_bps, pps, interval_s,
                       streams, reverse, bidir, response_size, burst, dscp, gro, batch, start_at, argv))

// Thrown for a command line that cannot run; the message is the one-line reason.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses argv (without argv[0]). "--help" and "--version" come back as std::nullopt after printing.
std::optional<client_options> parse_command_line(const std::vector<std::string>& args);

}  // namespace nb::load
