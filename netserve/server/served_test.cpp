#include "netserve/server/served_test.hpp"

#include "core/base/clock.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/policy/request_rules.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <sys/socket.h>

namespace nb::serve {

served_test::served_test(std::uint64_t id, std::string cookie, test_request request, endpoint peer, endpoint local,
                         std::shared_ptr<udp_port> port, std::shared_ptr<own_sockets> own_ports,
                         std::shared_ptr<xdp_engine> xdp)
    : id_(id),
      cookie_(std::move(cookie)),
      request_(std::move(request)),
      peer_(std::move(peer)),
      local_(std::move(local)),
      port_(std::move(port)),
      own_ports_(std::move(own_ports)),
      xdp_(std::move(xdp)),
      streams_(request_.streams, request_.reverse, request_.kind, request_.message_size) {
  unattributed_at_start_ = port_->unattributed();
  // Checked (request_rules.cpp): one of the modes.
  if (request_.kind == test_kind::udp_stream && request_.reverse)
    segmentation_ = resolve_segmentation(parse_gso_mode(request_.segmentation).value_or(gso_mode::automatic),
                                         peer_.unmapped(), local_.unmapped(), request_.message_size);
}

served_test::~served_test() {
  streams_.stop();
  forget_flows();
  if (udp_flows_) port_->detach(udp_flows_);
}

void served_test::forget_flows() noexcept {
  for (const endpoint& e : xdp_flows_) xdp_->remove_flow(e, local_.port());
  xdp_flows_.clear();
}

int served_test::pinned_cpu() const {
  if (udp_flows_) return udp_flows_->pinned.load(std::memory_order_relaxed);
  return streams_.size() > 0 ? streams_[0].pinned_cpu.load(std::memory_order_relaxed) : -1;
}

int served_test::attach_udp() {
  std::vector<endpoint> sources;
  for (auto p : request_.data_ports) {
    endpoint e = peer_;
    e.set_port(p);
    sources.push_back(e);
  }
  int granted = port_->grow_recv_buffer(request_.rcvbuf);
  if (counts_at_driver()) {
    for (const endpoint& e : sources) {
      xdp_->add_flow(e, local_.port(), request_.message_size);  // throws: forget_flows removes the rest
      xdp_flows_.push_back(e);
    }
  }
  udp_flows_ = std::make_shared<udp_flows>(std::move(sources), port_->lanes());
  for (recv_counters& c : udp_flows_->counters) c.format = payload_;
  udp_flows_->cpu = request_.cpu;
  if (request_.kind == test_kind::udp_rr) {
    std::vector<bool> itself;
    for (const endpoint& e : udp_flows_->sources) itself.push_back(is_netserve_itself(e, *own_ports_));
    udp_flows_->answer(request_.message_size, request_.response_size, local_, std::move(itself));
    claim_targets();  // its answers go to its sources
  }
  port_->attach(udp_flows_);
  return granted;
}

std::string served_test::receive_batching() const {
  if (!counts_at_driver()) return port_->batching();
  return fmt::format("{} ({}) at {}", xdp_->name(), xdp_->pass() ? "pass" : "drop", xdp_->interface());
}

std::pair<int, int> served_test::data_socket_buffers() const {
  if (is_udp(request_.kind)) return {0, send_buffer(port_->fd())};  // reverse: the port's socket
  // TCP connections come after the ready message: a probe shows what they get (netperf too reports the
  // size set before the connection, not autotuning's).
  fd_handle probe = make_socket(peer_.family(), SOCK_STREAM);
  return {request_.rcvbuf > 0 ? set_recv_buffer(probe.get(), request_.rcvbuf) : recv_buffer(probe.get()),
          request_.sndbuf > 0 ? set_send_buffer(probe.get(), request_.sndbuf) : send_buffer(probe.get())};
}

attach_refusal served_test::attach_tcp(std::uint32_t stream, fd_handle fd) {
  if (!is_tcp(request_.kind)) return "data connection for a test that is not a TCP test";
  if (stream >= request_.streams) return fmt::format("stream {} is out of range", stream);
  if (streams_[stream].fd) return fmt::format("stream {} is already connected", stream);
  if (endpoint::peer_of(fd.get()).address() != peer_.address())
    return "data connection from another address than the control connection";
  if (request_.rcvbuf > 0) set_recv_buffer(fd.get(), request_.rcvbuf);
  if (request_.sndbuf > 0) set_send_buffer(fd.get(), request_.sndbuf);
  // Both ends, as iperf3 does: the sender's decides the rate; the receiver's is recorded.
  if (!request_.congestion.empty()) {
    try {
      set_tcp_congestion(fd.get(), request_.congestion);
    } catch (const std::exception& e) {
      return e.what();
    }
  }
  streams_[stream].fd = std::move(fd);
  // Thread and buffer at the start: a client that never starts holds descriptors, no memory.
  if (start_wall_ns_ != 0) start_tcp_stream(stream);
  return std::nullopt;
}

void served_test::start_tcp_stream(std::uint32_t stream) {
  if (request_.reverse) return start_sender(stream);
  stream_plan plan;
  plan.fd = streams_[stream].fd.get();
  plan.cpu = request_.cpu;
  plan.recv_size = request_.recv_size;
  plan.recv_copy = request_.recv_copy;
  plan.message_size = request_.message_size;
  plan.response_size = request_.response_size;
  streams_.start(stream, plan);
}

attach_refusal served_test::attach_next_tcp(fd_handle fd) {
  for (std::uint32_t s = 0; s < request_.streams; ++s)
    if (!streams_[s].fd) return attach_tcp(s, std::move(fd));
  return "every stream of the test is connected already";
}

bool served_test::all_data_attached() const {
  if (!is_tcp(request_.kind)) return true;
  for (std::uint32_t s = 0; s < request_.streams; ++s)
    if (!streams_[s].fd) return false;
  return true;
}

void served_test::start(std::int64_t start_wall_ns) {
  start_wall_ns_ = start_wall_ns;
  began_wall_ns_ = std::max(start_wall_ns, wall_ns());
  if (is_udp(request_.kind)) {  // forward: the port's lanes receive and answer
    if (request_.kind == test_kind::udp_rr && udp_flows_)
      udp_flows_->answer_between(start_wall_ns - rr_answer_lead_ns,
                                 began_wall_ns_ + s_to_ns(request_.duration_s) + rr_answer_drain_ns);
    if (!request_.reverse) return;
    for (std::uint32_t s = 0; s < request_.streams; ++s) {
      endpoint dest = peer_;
      dest.set_port(request_.data_ports[s]);
      if (is_netserve_itself(dest, *own_ports_))
        throw protocol_error(own_socket_refusal(dest.port(), dest.unmapped().address()));
    }
    claim_targets();
    for (std::uint32_t s = 0; s < request_.streams; ++s) start_sender(s);
    return;
  }
  for (std::uint32_t s = 0; s < request_.streams; ++s)
    if (streams_[s].fd) start_tcp_stream(s);
}

void served_test::claim_targets() {
  if (request_.data_ports.empty() || !is_local_address(peer_)) return;
  targets_ = serve::claim_targets(own_ports_, request_.data_ports);
}

void served_test::start_sender(std::uint32_t stream) {
  stream_plan plan;
  plan.message_size = request_.message_size;
  plan.pps = request_.pps / request_.streams;
  plan.start_wall_ns = start_wall_ns_;
  plan.duration_ns = s_to_ns(request_.duration_s);
  plan.batch = default_batch(request_.message_size);
  plan.gso = segmentation_.mode == "gso";
  plan.cpu = request_.cpu;
  plan.send_call = request_.zerocopy    ? tcp_send_call::zerocopy
                   : request_.send_copy ? tcp_send_call::copy
                                        : tcp_send_call::sendfile;
  if (request_.kind == test_kind::udp_stream) {
    plan.fd = port_->fd();
    endpoint dest = peer_;
    dest.set_port(request_.data_ports[stream]);
    plan.dest = dest;
    // The port's shared wildcard socket: source and DSCP per datagram, so the client's connected socket
    // accepts them and no other test is marked.
    plan.source = local_;
    plan.tos = request_.dscp >= 0 ? request_.dscp << 2 : -1;
    plan.payload = payload_;
  } else {
    plan.fd = streams_[stream].fd.get();
    if (request_.dscp >= 0) set_dscp(plan.fd, peer_.family(), request_.dscp);
  }
  streams_.start(stream, plan);
}

stream_set::received_of served_test::received_from_port() const {
  if (request_.reverse || !is_udp(request_.kind)) return {};
  return [this](std::size_t s) {
    flow_totals socket = udp_flows_ ? totals_of(*udp_flows_, s) : flow_totals{};
    return counts_at_driver() ? received_at_driver(s, socket) : socket;
  };
}

// How the driver's and the socket's counts combine: docs/netserve.md#xdp-engine
flow_totals served_test::received_at_driver(std::size_t stream, const flow_totals& socket) const {
  if (stream >= xdp_flows_.size()) return socket;  // finished, or never all added
  flow_totals t = xdp_->read_flow(xdp_flows_[stream], local_.port());
  if (xdp_->pass()) {
    // Came by another interface, or in a form the program leaves alone (two VLAN tags, extension headers).
    if (socket.packets > t.packets) return socket;
    t.jitter_ns = socket.sequenced > 1 ? socket.jitter_ns : -1;
    return t;
  }
  t.add_counts(socket);
  if (socket.sequenced > 1) t.jitter_ns = socket.jitter_ns;
  return t;
}

void served_test::totals(std::uint64_t& packets, std::uint64_t& bytes) const {
  streams_.totals(packets, bytes, received_from_port());
}

bool served_test::finished() const { return (!request_.reverse && is_udp(request_.kind)) || streams_.all_done(); }

bool served_test::drained(std::int64_t quiet_ns) const {
  // Kernel stamps: "quiet" alone is fooled by a receiver that is behind. Another test on the port may
  // keep a queue busy; the drain bound ends the wait then.
  std::int64_t last = 0;
  for (const recv_counters& c : udp_flows_->counters) last = std::max(last, c.last_arrival_ns.get());
  if (counts_at_driver())
    for (std::size_t s = 0; s < xdp_flows_.size(); ++s)
      last = std::max(last, xdp_->read_flow(xdp_flows_[s], local_.port()).last_arrival_ns + xdp_engine::stamp_lag_ns);
  return port_->queued_bytes() == 0 && wall_ns() - last >= quiet_ns;
}

void served_test::stop_sending() noexcept {
  if (request_.reverse) streams_.request_stop();
}

std::vector<flow_totals> served_test::stream_totals() const {
  std::vector<flow_totals> out(request_.streams);
  const auto received = received_from_port();
  for (std::uint32_t s = 0; s < request_.streams; ++s) {
    if (streams_.sending()) {
      out[s].packets = streams_[s].sent.packets.get();
      out[s].bytes = streams_[s].sent.bytes.get();
    } else {
      out[s] = streams_.stream_received(s, received);
    }
  }
  return out;
}

side_counts served_test::finish() {
  streams_.stop();
  side_counts c = streams_.counts(received_from_port());
  if (!request_.reverse) c.receive_engine = "socket";
  if (!request_.reverse && is_udp(request_.kind)) {
    c.kernel_drops = port_->drops_since(*udp_flows_, c.drops_shared);
    if (request_.kind == test_kind::udp_rr) {
      const answer_totals a = answers_of(*udp_flows_);
      c.responses = a.packets;
      c.response_bytes = a.bytes;
      c.errors = a.refused;
      unanswered_ = a.unanswered;
    }
    lanes_used_ = serve::lanes_used(*udp_flows_);
    c.batching = receive_batching();
    if (counts_at_driver()) {
      // Passing on, socket drops are of datagrams the driver counted; dropping, the socket's are the test's.
      if (xdp_->pass()) c.kernel_drops = 0;
      c.receive_engine = xdp_->name();
      for (std::size_t s = 0; s < udp_flows_->sources.size(); ++s) {
        flow_totals socket = totals_of(*udp_flows_, s);
        c.socket_packets += socket.packets;
        c.socket_bytes += socket.bytes;
      }
    }
    forget_flows();
    port_->detach(udp_flows_);
    udp_flows_.reset();
  }
  return c;
}

std::vector<tcp_sample> served_test::tcp_samples() const {
  return samples_tcp() ? streams_.tcp_samples() : std::vector<tcp_sample>{};
}

std::vector<tcp_sample> served_test::tcp_end_samples() const {
  return samples_tcp() ? streams_.tcp_end_samples() : std::vector<tcp_sample>{};
}

std::string served_test::congestion() const { return sends_tcp() ? streams_.congestion() : std::string(); }

void log_test_result(std::uint16_t port, const served_test& test, const side_counts& c, std::uint64_t unattributed,
                     double seconds, const std::string& client) {
  fmt::print(stderr, "{}\n", test_result_line(port, test, c, unattributed, seconds, client));
}

std::string test_result_line(std::uint16_t port, const served_test& test, const side_counts& c,
                             std::uint64_t unattributed, double seconds, const std::string& client) {
  const test_request& r = test.request();
  return fmt::format(
      "netserve: port {} test {} {} {} from {} m={} streams={}: {} packets={} bytes={} seconds={:.3f} pps={:.1f} "
      "mbps={:.3f} kernel_drops={} unattributed={}{}{}{}{}{}{}{}",
      port, test.id(), to_string(r.kind), r.reverse ? "reverse" : "forward", test.peer().address(), r.message_size,
      r.streams, r.reverse ? "sent" : "received", c.packets, c.bytes, seconds, per_second(c.packets, seconds),
      bits_per_second(c.bytes, seconds) / 1e6, c.kernel_drops, unattributed,
      test.lanes_used().empty() ? "" : " lanes=", test.lanes_used(),
      is_rr(r.kind)
          ? fmt::format(" answers={} answer_bytes={} answers_refused={}{}", c.responses, c.response_bytes,
                        r.kind == test_kind::udp_rr ? c.errors : 0,
                        r.kind == test_kind::udp_rr ? fmt::format(" unanswered={}", test.unanswered()) : std::string())
          : std::string(),
      c.error.empty() ? "" : " error=", printable_bounded(c.error),
      client.empty() ? "" : " client=", printable_bounded(client));
}

}  // namespace nb::serve
