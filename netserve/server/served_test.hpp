#pragma once
// The server's side of one test: its data-plane threads and counters. Its control connection drives it;
// TCP data connections attach to it by cookie.
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

// Why a data connection has no place in a test; std::nullopt: attached.
using attach_refusal = std::optional<std::string>;

class served_test {
 public:
  // `own_ports`: no datagram of the test may come from or go to them; `xdp` null: the socket engine.
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
  // With a key: data connections' tokens derive from it.
  void set_data_key(std::string key) { data_key_ = std::move(key); }
  const std::string& data_key() const noexcept { return data_key_; }

  // Both before attach_udp and start. Data ports: learnt after registration from iperf3's hellos.
  void set_payload(payload_format f) noexcept { payload_ = f; }
  void set_data_ports(std::vector<std::uint16_t> ports) { request_.data_ports = std::move(ports); }
  // Forward UDP. Returns the receive buffer granted; throws std::runtime_error when XDP cannot count it.
  int attach_udp();
  // For the ready message: "gro", "xdp-native (drop) at DEV".
  std::string receive_batching() const;
  // Reverse UDP and TCP: (receive, send) buffers, netperf's remote socket size columns.
  std::pair<int, int> data_socket_buffers() const;
  const segmentation_figures& segmentation() const noexcept { return segmentation_; }
  [[nodiscard]] attach_refusal attach_tcp(std::uint32_t stream, fd_handle fd);
  bool all_data_attached() const;
  // iperf3's streams come in order and do not say their number.
  [[nodiscard]] attach_refusal attach_next_tcp(fd_handle fd);
  // Starts every stream (senders wait for the instant) and a UDP_RR test's answer window. Throws
  // protocol_error when a reverse stream would go to netserve itself (an address new since registration).
  void start(std::int64_t start_wall_ns);
  // The start instant, or when start() ran if later.
  std::int64_t began_wall_ns() const noexcept { return began_wall_ns_; }

  // Received forward, sent in reverse.
  void totals(std::uint64_t& packets, std::uint64_t& bytes) const;
  bool finished() const;
  // -1 unless pinned as the client asked; forward UDP: once a lane really ran there.
  int pinned_cpu() const;
  // Forward UDP: quiet for `quiet_ns` and the lanes' queues empty.
  bool drained(std::int64_t quiet_ns) const;
  // Reverse TCP only (this side sends), else empty: now, and as each sender ended.
  std::vector<tcp_sample> tcp_samples() const;
  std::vector<tcp_sample> tcp_end_samples() const;
  std::string congestion() const;
  // Reverse: the client stopped early; the counts stay.
  void stop_sending() noexcept;
  std::vector<flow_totals> stream_totals() const;
  // Stops every thread (bounded).
  side_counts finish();
  std::uint64_t unattributed_since_start() const { return port_->unattributed() - unattributed_at_start_; }
  // Forward UDP, once finished.
  const std::string& lanes_used() const noexcept { return lanes_used_; }
  std::uint64_t unanswered() const noexcept { return unanswered_; }

 private:
  void start_sender(std::uint32_t stream);
  // A local peer's data ports: no netperf data socket is bound there.
  void claim_targets();
  void start_tcp_stream(std::uint32_t stream);
  stream_set::received_of received_from_port() const;
  flow_totals received_at_driver(std::size_t stream, const flow_totals& socket) const;
  bool counts_at_driver() const noexcept { return xdp_ && !request_.reverse && request_.kind == test_kind::udp_stream; }
  void forget_flows() noexcept;
  bool sends_tcp() const noexcept { return request_.reverse && request_.kind == test_kind::tcp_stream; }
  // About 600 bytes of JSON each: netload's most streams fit a frame; more get none rather than no frame.
  bool samples_tcp() const noexcept { return sends_tcp() && request_.streams <= max_streams_per_test; }

  std::uint64_t id_;
  std::string cookie_;
  test_request request_;
  endpoint peer_;
  endpoint local_;                  // reverse datagrams come from it
  std::shared_ptr<udp_port> port_;  // a test may outlive the server at shutdown
  std::shared_ptr<own_sockets> own_ports_;
  port_claim targets_;
  std::shared_ptr<xdp_engine> xdp_;
  std::vector<endpoint> xdp_flows_;
  std::uint64_t unattributed_at_start_ = 0;
  std::int64_t start_wall_ns_ = 0;
  std::int64_t began_wall_ns_ = 0;
  std::uint64_t unanswered_ = 0;
  std::string lanes_used_;
  segmentation_figures segmentation_{"gso", false, "as asked"};
  std::string data_key_;
  payload_format payload_ = payload_format::netload;

  std::shared_ptr<udp_flows> udp_flows_;  // forward UDP
  stream_set streams_;                    // last: its threads stop before anything above goes
};

// One per test, whoever its client; `client` empty for netload, else "iperf3 3.12".
std::string test_result_line(std::uint16_t port, const served_test& test, const side_counts& counts,
                             std::uint64_t unattributed, double seconds, const std::string& client = {});
void log_test_result(std::uint16_t port, const served_test& test, const side_counts& counts, std::uint64_t unattributed,
                     double seconds, const std::string& client = {});

}  // namespace nb::serve
