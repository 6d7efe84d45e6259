#pragma once
// The server's side of one test: its data-plane threads and counters. Built by its control connection,
// which drives it; TCP data connections, which arrive on their own connections, attach to it by cookie.
#include "core/base/limits.hpp"
#include "core/data/segmentation.hpp"
#include "core/data/streams.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/flow.hpp"
#include "core/wire/native/protocol.hpp"
#include "netserve/server/own_sockets.hpp"
#include "netserve/server/udp_port.hpp"
#include "netserve/server/xdp_engine.hpp"

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace nb::serve {

// Why a data connection has no place in a test (for the log and the client); std::nullopt: attached.
using attach_refusal = std::optional<std::string>;

class served_test {
 public:
  // `own_ports`: netserve's own sockets, which no datagram of the test may come from or go to on this
  // host's addresses; the test's own targets there join them while it lives (netserve/server/own_sockets.hpp).
  // `xdp`: netserve's XDP engine, which then counts forward UDP at the driver; null: the socket engine.
  served_test(std::uint64_t id, std::string cookie, test_request request, endpoint peer, endpoint local,
              std::shared_ptr<udp_port> port, std::shared_ptr<own_sockets> own_ports,
              std::shared_ptr<xdp_engine> xdp = nullptr);
  ~served_test();
  served_test(const served_test&) = delete;
  served_test& operator=(const served_test&) = delete;

  std::uint64_t id() const noexcept { return id_; }
  const std::string& cookie() const noexcept { return cookie_; }
  const test_request& request() const noexcept { return request_; }
  const endpoint& peer() const noexcept { return peer_; }
  std::int64_t start_wall_ns() const noexcept { return start_wall_ns_; }
  // With a key: the control connection's session key, from which data connections' tokens derive.
  void set_data_key(std::string key) { data_key_ = std::move(key); }
  const std::string& data_key() const noexcept { return data_key_; }

  // The header of the test's datagrams, both ways (core/wire/native/flow.hpp); before attach_udp and start.
  void set_payload(payload_format f) noexcept { payload_ = f; }
  // UDP: the client's port per stream, when they are learnt after registration (iperf3's hellos); before
  // attach_udp and start.
  void set_data_ports(std::vector<std::uint16_t> ports) { request_.data_ports = std::move(ports); }
  // Forward UDP: start counting the client's datagrams. Returns the receive buffer granted. Throws
  // std::runtime_error when the XDP engine cannot count the test's flows.
  int attach_udp();
  // Forward UDP: how the receiver counts, for the ready message ("gro", or "xdp-native (drop) at DEV").
  std::string receive_batching() const;
  // Reverse UDP and TCP: the receive and send buffers this side's data sockets get, for the ready
  // message (netperf's remote socket size columns).
  std::pair<int, int> data_socket_buffers() const;
  // Reverse UDP_STREAM: whether this side sends GSO buffers or datagram by datagram, and why.
  const segmentation_figures& segmentation() const noexcept { return segmentation_; }
  // A TCP data connection for `stream`: std::nullopt when the test took it, else why it does not fit.
  [[nodiscard]] attach_refusal attach_tcp(std::uint32_t stream, fd_handle fd);
  bool all_data_attached() const;
  // A TCP data connection for the first stream not yet connected (iperf3's streams come in order and do
  // not say their number); refused as attach_tcp's.
  [[nodiscard]] attach_refusal attach_next_tcp(fd_handle fd);
  // The agreed start instant: every stream's thread starts (senders wait for the instant), and a UDP_RR
  // test's requests are answered from the instant to its end (from now when the instant is past) and a
  // drain (core/data/rr.hpp). Throws protocol_error when a reverse stream would go to netserve itself (an
  // address of this host that has become one since the test was registered).
  void start(std::int64_t start_wall_ns);
  // When the test's data began on this side's clock: the start instant, or when start() ran if later.
  std::int64_t began_wall_ns() const noexcept { return began_wall_ns_; }

  // Cumulative counts of this side so far (received forward, sent in reverse), for interval reports.
  void totals(std::uint64_t& packets, std::uint64_t& bytes) const;
  // True once this side is done: senders finished, or TCP receivers saw EOF.
  bool finished() const;
  // The CPU this test's data thread ran on when pinned as the client asked (-T ,N), else -1. Forward UDP:
  // only once a receive lane really was pinned there (a port shared with a test that asked for another
  // CPU, or a CPU outside netserve's set, leaves it unpinned).
  int pinned_cpu() const;
  // Forward UDP: the port has been quiet for `quiet_ns` and its lanes' queues are empty.
  bool drained(std::int64_t quiet_ns) const;
  // Reverse TCP, where this side sends: each stream's connection now (TCP_INFO), for interval reports;
  // empty otherwise.
  std::vector<tcp_sample> tcp_samples() const;
  // Reverse TCP, once finished: each stream's connection as its sender ended, and the congestion control
  // they used ("" unknown); empty otherwise.
  std::vector<tcp_sample> tcp_end_samples() const;
  std::string congestion() const;
  // Reverse: the client stopped early; the senders end now (their counts stay). Forward: nothing.
  void stop_sending() noexcept;
  // Each stream's counts so far: received (forward), or sent (reverse: packets, bytes).
  std::vector<flow_totals> stream_totals() const;
  // Stops every thread (bounded) and returns this side's counts.
  side_counts finish();
  std::uint64_t unattributed_since_start() const { return port_->unattributed() - unattributed_at_start_; }
  // Forward UDP, once finished: which of the port's receive lanes the test's datagrams arrived on.
  const std::string& lanes_used() const noexcept { return lanes_used_; }
  // UDP_RR, once finished: the requests left unanswered (outside the window, repeats, of another size).
  std::uint64_t unanswered() const noexcept { return unanswered_; }

 private:
  void start_sender(std::uint32_t stream);
  // The data ports, on a peer that is this host: netperf data sockets are then not bound there.
  void claim_targets();
  void start_tcp_stream(std::uint32_t stream);
  // Forward UDP: a stream's counts are the port's lanes' blocks for it; everything else counts its own.
  stream_set::received_of received_from_port() const;
  flow_totals received_at_driver(std::size_t stream, const flow_totals& socket) const;
  bool counts_at_driver() const noexcept { return xdp_ && !request_.reverse && request_.kind == test_kind::udp_stream; }
  void forget_flows() noexcept;
  bool sends_tcp() const noexcept { return request_.reverse && request_.kind == test_kind::tcp_stream; }
  // A sample is at most about 600 bytes of JSON: netload's 64 streams' fit a frame (64 KiB) with room to
  // spare; a client asking a netserve started with more --max-streams gets none rather than no frame.
  bool samples_tcp() const noexcept { return sends_tcp() && request_.streams <= max_streams_per_test; }

  std::uint64_t id_;
  std::string cookie_;
  test_request request_;
  endpoint peer_;
  endpoint local_;                  // the control connection's local address: reverse datagrams come from it
  std::shared_ptr<udp_port> port_;  // shared: a test may outlive the server object at shutdown
  std::shared_ptr<own_sockets> own_ports_;
  port_claim targets_;  // the ports on this host the test sends to (a local peer's), in own_ports_->targets
  std::shared_ptr<xdp_engine> xdp_;  // null: the socket engine
  std::vector<endpoint> xdp_flows_;  // the sources the engine counts for this test
  std::uint64_t unattributed_at_start_ = 0;
  std::int64_t start_wall_ns_ = 0;
  std::int64_t began_wall_ns_ = 0;
  std::uint64_t unanswered_ = 0;
  std::string lanes_used_;
  segmentation_figures segmentation_{"gso", false, "as asked"};
  std::string data_key_;
  payload_format payload_ = payload_format::netload;

  std::shared_ptr<udp_flows> udp_flows_;  // forward UDP: the port's lanes count it
  // TCP streams' connections, and every thread: senders in reverse, TCP receivers forward. Last: its
  // threads stop before anything above goes.
  stream_set streams_;
};

// The log line of a finished test, one per test whoever its client was: `counts` and `unattributed` as the
// result says them, `seconds` the duration the rates are computed over; `client` names a client that is
// not netload ("iperf3 3.12"), empty for netload.
std::string test_result_line(std::uint16_t port, const served_test& test, const side_counts& counts,
                             std::uint64_t unattributed, double seconds, const std::string& client = {});
void log_test_result(std::uint16_t port, const served_test& test, const side_counts& counts, std::uint64_t unattributed,
                     double seconds, const std::string& client = {});

}  // namespace nb::serve
