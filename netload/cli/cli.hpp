#pragma once
// netload's command line: netperf's shape (global options, "--", test options), so a netperf command
// works with the program's name changed; long options for what netperf lacks.
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

// A stock peer's own counts become the receiver's.
enum class peer_kind { netserve, iperf3, netserver };

struct client_options {
  peer_kind peer = peer_kind::netserve;
  std::string host = "127.0.0.1";
  std::uint16_t port = 12865;              // netperf's
  std::string local_address;               // "" = the kernel's choice
  int family = 0;                          // 0 = any
  test_kind kind = test_kind::tcp_stream;  // netperf's default
  double duration_s = 10;
  std::uint32_t message_size = 0;  // 0 = the test's default
  std::int32_t local_buffer = 0;
  std::int32_t remote_buffer = 0;
  std::int32_t local_cpu = -1, remote_cpu = -1;
  bool local_cpu_util = false;
  bool remote_cpu_util = false;
  std::uint32_t mss = 0;        // --mss; netperf's -M is recv_size
  char rate_units = 0;          // -f's letter; 0 = netload's own
  double omit_s = 0;            // run before -l's seconds, left out of the rates
  std::string congestion;       // -K: both ends
  std::uint32_t recv_size = 0;  // per recv(); 0 = the receiver's default
  bool zerocopy = false;
  bool send_copy = false;                    // send() instead of sendfile()
  recv_mode receive = recv_mode::automatic;  // as asked
  bool recv_copy = false;                    // `receive` as resolved once connected (resolve_receive)
  std::uint32_t response_size = 0;           // RR; the request's is message_size
  std::uint32_t burst = 0;                   // RR: in flight beyond the first
  double rate_bps = 0;                       // payload, all streams together
  double pps = 0;                            // all streams together
  double interval_s = 0;
  bool json = false;
  bool json_stream = false;
  std::optional<double> start_at;  // epoch seconds
  bool start_on_stdin = false;
  std::uint32_t streams = 1;
  bool reverse = false;
  bool bidir = false;
  std::int32_t dscp = -1;
  gso_mode gso = gso_mode::automatic;  // as asked
  bool send_gso = true;                // `gso` as resolved for the route (resolve_gso)
  bool gro = true;
  std::size_t batch = 0;  // datagrams per system call, 0 = automatic
  double connect_timeout_s = 5;
  std::string psk_file;
  std::vector<std::string> argv;  // as given, for the result
  bool host_info = false;         // no test: this host's facts, then the clock service
  std::vector<std::string> mtu_peers;
  search_options search;

  // From --pps or --rate, all streams together; 0 = unlimited.
  double target_pps() const;
};
// What a result's JSON echoes; options_json (report.hpp) adds the rest.
BOOST_DESCRIBE_STRUCT(client_options, (),
                      (host, port, local_address, duration_s, message_size, local_buffer, remote_buffer, local_cpu,
                       remote_cpu, local_cpu_util, remote_cpu_util, mss, recv_size, omit_s, rate_bps, pps, interval_s,
                       streams, reverse, bidir, response_size, burst, dscp, gro, batch, start_at, argv))

// A command line that cannot run; the message is the one-line reason (exit status 2).
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// argv without argv[0]; std::nullopt after printing --help or --version.
std::optional<client_options> parse_command_line(const std::vector<std::string>& args);

}  // namespace nb::load
