#include "core/data/streams.hpp"

#include "core/base/clock.hpp"
#include "core/base/units.hpp"
#include "core/data/pacer.hpp"
#include "core/data/tcp_send.hpp"
#include "core/data/udp_io.hpp"
#include "core/sys/eintr.hpp"
#include "core/sys/kernel_features.hpp"
#include "core/sys/socket.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

namespace nb {
namespace {

constexpr std::int64_t poll_ns = 100'000'000;  // how often a blocked loop looks at its stop token

}  // namespace

// Waits for the start instant (in slices that look at the stop token: the instant may be an hour away),
// then fixes the test's monotonic start and end from the moment this thread actually woke: a thread that
// wakes late sends for the full duration from then, paced from then (no backlog to catch up), and its
// elapsed time is the time it really sent. netload refuses an instant already past (netload/native/client.cpp).
void begin_stream(const std::stop_token& stop, const stream_plan& plan, stream_outcome& out, std::int64_t& start_mono,
                  std::int64_t& end_mono) {
  while (!stop.stop_requested() && wall_ns() < plan.start_wall_ns)
    sleep_until_ns(CLOCK_REALTIME, std::min(plan.start_wall_ns, wall_ns() + poll_ns));
  start_mono = mono_ns();
  out.start_wall_ns = wall_ns();
  end_mono = start_mono + plan.duration_ns;
}

namespace {

// The path MTU of the socket's own route, or, on an unconnected one (netserve's port), of the route to
// the stream's destination.
std::string mtu_error(int fd, int family, const std::optional<endpoint>& dest, std::size_t size) {
  int mtu = path_mtu(fd, family);
  if (mtu == 0 && dest) {
    try {
      mtu = path_mtu_to(*dest);
      family = dest->unmapped().family();
    } catch (const std::system_error&) {  // no route any more: the MTU stays unknown
    }
  }
  return fmt::format(
      "message of {} bytes does not fit the path MTU {} (largest UDP payload {}); "
      "the datagram was not fragmented",
      size, mtu, max_udp_payload(mtu, family));
}

// Pins the calling (stream) thread as its plan asks and keeps whether it could: a CPU outside this
// process's set is not an error (netserve serves clients that name their own CPUs), but a figure taken
// on it must not claim the pinning (host_delta::pinned_cpu).
void pin(data_stream& d, int cpu) {
  if (cpu >= 0 && pin_thread_to_cpu(cpu)) d.pinned_cpu.store(cpu, std::memory_order_relaxed);
}

}  // namespace

void run_udp_sender(std::stop_token stop, const stream_plan& plan, send_counters& counters, stream_outcome& out) {
  set_receive_timeout(plan.fd, poll_ns);
  set_send_timeout(plan.fd, poll_ns);
  udp_batch_sender sender(plan.fd, plan.message_size, plan.batch, plan.gso, plan.dest, plan.source, plan.tos,
                          plan.payload);
  std::int64_t start = 0, end = 0;
  begin_stream(stop, plan, out, start, end);
  pacer pace(plan.pps, start, sender.batch());
  std::uint64_t attempted = 0;
  while (!stop.stop_requested()) {
    std::size_t n = pace.due(attempted, sender.batch(), end, stop);
    if (n == 0 || mono_ns() >= end) break;
    send_outcome r = sender.send(n, attempted, wall_ns());  // refused ones keep their numbers: none is reused
    attempted += r.sent + r.refused;
    counters.packets.add(r.sent);
    counters.bytes.add(r.sent * plan.message_size);
    counters.errors.add(r.refused);
    if (r.fatal) {
      int family = plan.dest ? plan.dest->family() : endpoint::peer_of(plan.fd).family();
      out.error = r.fatal.value() == EMSGSIZE ? mtu_error(plan.fd, family, plan.dest, plan.message_size)
                                              : fmt::format("send: {}", r.fatal.message());
      break;
    }
  }
  out.elapsed_ns = mono_ns() - start;
  out.batching = std::string(sender.mode());
}

namespace {

constexpr std::uint64_t zerocopy_read_every = 32;               // sends between two reads of the completions
constexpr std::int64_t zerocopy_final_wait_ns = 2'000'000'000;  // for the last ones, after the end

// MSG_ZEROCOPY as the plan asks, when the kernel takes it; a refusal is said in the batching.
std::optional<zerocopy_completions> start_zerocopy(const stream_plan& plan, stream_outcome& out) {
  if (plan.send_call != tcp_send_call::zerocopy) return std::nullopt;
  std::string why;
  if (enable_zerocopy(plan.fd, why)) return zerocopy_completions(plan.fd);
  out.batching = fmt::format("send, no zerocopy (SO_ZEROCOPY: {})", why);
  return std::nullopt;
}

// The last completions come as the peer acknowledges the last bytes, after the end: waited for, briefly,
// so the result can say what the kernel did with every send.
// A stop request ends the wait (netserve joins its streams on its one control thread); a poll that
// returns at once without completions (the peer hung up) does not spin.
void finish_zerocopy(const std::stop_token& stop, zerocopy_completions& zc, stream_outcome& out) {
  const std::int64_t give_up = mono_ns() + zerocopy_final_wait_ns;
  while (zc.outstanding() > 0 && mono_ns() < give_up && !stop.stop_requested()) {
    const std::uint64_t before = zc.counts().completed;
    if (std::error_code ec = zc.wait(poll_ns); ec) break;
    if (zc.counts().completed == before) ::poll(nullptr, 0, 10);
  }
  out.zerocopy = zc.counts();
}

}  // namespace

void run_tcp_sender(std::stop_token stop, const stream_plan& plan, send_counters& counters, stream_outcome& out) {
  set_send_timeout(plan.fd, poll_ns);
  block_sigpipe_in_this_thread();
  tcp_message_source source(plan.message_size, plan.send_call);
  std::optional<zerocopy_completions> zc = start_zerocopy(plan, out);
  const int flags = zc ? MSG_ZEROCOPY : 0;
  std::int64_t start = 0, end = 0;
  begin_stream(stop, plan, out, start, end);
  pacer pace(plan.pps, start);
  std::uint64_t sends = 0;
  std::size_t offset = 0;  // a partial send is finished before the next message starts
  std::error_code zc_error;
  while (!stop.stop_requested() && mono_ns() < end && !zc_error) {
    if (offset == 0 && pace.due(sends, 1, end, stop) == 0) break;
    ssize_t r = source.send(plan.fd, offset, flags);
    if (r < 0) {
      if (transient_errno(errno)) continue;
      // Unread completions hold the socket's option memory (and pinned pages): read them, send again.
      if (errno == ENOBUFS && zc) {
        // With nothing outstanding no completion can come to free anything: the kernel will not pin this
        // message at all (over RLIMIT_MEMLOCK without CAP_IPC_LOCK, or net.core.optmem_max). Waiting would
        // send nothing for the whole test and report it as a success.
        if (zc->outstanding() == 0) {
          out.error = fmt::format(
              "send: MSG_ZEROCOPY refused a {}-byte message with nothing in flight (ENOBUFS: "
              "RLIMIT_MEMLOCK without CAP_IPC_LOCK, or net.core.optmem_max)",
              source.size() - offset);
          break;
        }
        zc_error = zc->wait(poll_ns);
        continue;
      }
      out.error = fmt::format("{}: {}", source.uses_sendfile() ? "sendfile" : "send", std::strerror(errno));
      break;
    }
    // Only bytes are published: messages are counted from them (tcp_messages), as the receiver does.
    counters.bytes.add(static_cast<std::uint64_t>(r));
    if (zc) {
      zc->sent();
      if (zc->counts().sends % zerocopy_read_every == 0) zc_error = zc->drain();
    }
    offset += static_cast<std::size_t>(r);
    if (offset == source.size()) {
      offset = 0;
      ++sends;
    }
  }
  out.elapsed_ns = mono_ns() - start;
  if (out.batching.empty()) out.batching = source.words();  // after the sends: a fallback says so
  std::error_code ignored;                                  // no sample is no error of the stream's
  out.tcp_end = read_tcp_sample(plan.fd, ignored);
  ::shutdown(plan.fd, SHUT_WR);
  if (zc_error) out.error = fmt::format("send: {}", zc_error.message());
  if (zc) finish_zerocopy(stop, *zc, out);
}

std::size_t tcp_default_recv_size(const std::string& congestion) {
  return congestion == "bbr" ? tcp_recv_size_bbr : tcp_recv_size_other;
}

void run_tcp_receiver(std::stop_token stop, const stream_plan& plan, recv_counters& counters, stream_outcome& out) {
  const int fd = plan.fd;
  set_receive_timeout(fd, poll_ns);
  const std::size_t size = plan.recv_size ? plan.recv_size : tcp_default_recv_size(congestion_of(fd));
  // Nobody looks at the bytes: by default the kernel discards them (MSG_TRUNC on TCP) and only counts,
  // which saves the receiver's copy. Where the receiving CPU also takes every segment's softirq (a NIC's
  // queue or RPS steered to it; the wire-like veth path), that copy is what limits the figure: 1 MiB
  // writes, cubic, measured 2.5 against 1.9 Gbit/s there, one stream, and 2.9 against 2.1 with five. On
  // loopback, where the receiving socket's TCP work runs in the sender's softirq unless the receiver holds
  // the socket, copying can be faster: the copy holds it, and the segments queued meanwhile are processed
  // on the receiver's CPU instead of the busy sender's. With sendfile() senders, one stream of 1 MiB
  // writes, copying measured from level (35.0 against 34.2 Gbit/s, six rounds) to 38.0 against 31.6 (ten);
  // with send() senders 45 against 27. recv_copy copies, as iperf3 and iperf2 do.
  const int flags = plan.recv_copy ? 0 : MSG_TRUNC;
  out.batching = fmt::format("recv {}{}", format_size(size), plan.recv_copy ? "" : ", discarded in the kernel");
  std::vector<unsigned char> buffer(size);
  while (!stop.stop_requested()) {
    ssize_t r = ::recv(fd, buffer.data(), buffer.size(), flags);
    if (r == 0) break;  // the sender shut down its side: every byte is in
    if (r < 0) {
      if (transient_errno(errno)) continue;
      out.error = fmt::format("recv: {}", std::strerror(errno));
      break;
    }
    std::int64_t now = wall_ns();
    if (counters.first_arrival_ns.get() == 0) counters.first_arrival_ns.set(now);
    counters.last_arrival_ns.set(now);
    counters.bytes.add(static_cast<std::uint64_t>(r));
  }
}

void run_udp_receiver(std::stop_token stop, int fd, bool gro, recv_counters& counters, stream_outcome& out) {
  set_receive_timeout(fd, poll_ns / 2);
  udp_batch_receiver rx(fd, 64, gro);
  out.batching = batching_with(rx.mode(), false, !kernel_has(kernel_feature::meminfo));
  while (!stop.stop_requested()) {
    std::error_code ec;
    rx.receive([&](const received& r) { counters.on_receive(r.data, r.len, r.segment, r.copied, r.arrival_ns); }, ec);
    if (ec) {
      out.error = fmt::format("recv: {}", ec.message());
      break;
    }
  }
}

namespace {

// A request/response stream's answers: a client's received and what became of the rest, a TCP_RR
// server's written (a UDP_RR server's come from its port, netserve/server/served_test.cpp).
void add_rr_counts(side_counts& c, const data_stream& d, bool client) {
  if (!client) {
    c.responses += d.sent.packets.get();
    c.response_bytes += d.sent.bytes.get();
    return;
  }
  c.responses += d.received.packets.get();
  c.response_bytes += d.received.bytes.get();
  c.timeouts += d.rr.timeouts.get();
  c.late_responses += d.rr.late.get();
  c.unmatched_responses += d.rr.unmatched.get();
}

}  // namespace

stream_set::stream_set(std::size_t streams, bool sending, test_kind kind, std::uint64_t message_size)
    : streams_(streams), sending_(sending), kind_(kind), message_size_(message_size) {}

void stream_set::start(std::size_t s, const stream_plan& plan) {
  data_stream& d = streams_[s];
  const test_kind kind = kind_;
  if (is_rr(kind) && sending_) {  // a request/response client
    if (!d.latency) d.latency = std::make_unique<latency_histogram>();
    d.thread = std::jthread([&d, plan, kind](std::stop_token st) {
      pin(d, plan.cpu);
      rr_client_state state{d.sent, d.received, d.rr, *d.latency};
      kind == test_kind::udp_rr ? run_udp_rr_client(st, plan, state, d.outcome)
                                : run_tcp_rr_client(st, plan, state, d.outcome);
      d.done = true;
    });
    return;
  }
  if (sending_) {
    d.thread = std::jthread([&d, plan, kind](std::stop_token st) {
      pin(d, plan.cpu);
      kind == test_kind::udp_stream ? run_udp_sender(st, plan, d.sent, d.outcome)
                                    : run_tcp_sender(st, plan, d.sent, d.outcome);
      d.done = true;
    });
    return;
  }
  d.thread = std::jthread([&d, plan, kind](std::stop_token st) {
    pin(d, plan.cpu);
    if (kind == test_kind::tcp_rr) run_tcp_rr_server(st, plan, d.received, d.sent, d.outcome);
    else if (kind == test_kind::udp_stream) run_udp_receiver(st, plan.fd, plan.gro, d.received, d.outcome);
    else run_tcp_receiver(st, plan, d.received, d.outcome);
    d.done = true;
  });
}

bool stream_set::all_done() const noexcept {
  return std::all_of(streams_.begin(), streams_.end(), [](const data_stream& d) { return d.done.load(); });
}

void stream_set::request_stop() noexcept {
  for (auto& d : streams_) d.thread.request_stop();
}

void stream_set::stop() {
  request_stop();
  for (auto& d : streams_)
    if (d.thread.joinable()) d.thread.join();
}

flow_totals stream_set::received_by(std::size_t s, const received_of& received) const {
  return received ? received(s) : flow_totals{}.add(streams_[s].received);
}

void stream_set::totals(std::uint64_t& packets, std::uint64_t& bytes, const received_of& received) const {
  packets = bytes = 0;
  for (std::size_t s = 0; s < streams_.size(); ++s) {
    if (sending_ || kind_ == test_kind::tcp_rr) {  // a TCP_RR server's requests are counted whole, like a sender's
      if (!sending_) {
        packets += streams_[s].received.packets.get();
        bytes += streams_[s].received.bytes.get();
        continue;
      }
      packets += streams_[s].sent.packets.get();
      bytes += streams_[s].sent.bytes.get();
    } else {
      flow_totals t = received_by(s, received);
      packets += t.packets;
      bytes += t.bytes;
    }
  }
  // TCP, sending or receiving: messages from the bytes of all streams, as the other side counts them.
  if (kind_ == test_kind::tcp_stream) packets = tcp_messages(bytes, message_size_);
}

side_counts stream_set::counts(const received_of& received) const {
  side_counts c;
  zerocopy_counts zerocopy;
  totals(c.packets, c.bytes, received);
  for (std::size_t s = 0; s < streams_.size(); ++s) {
    const data_stream& d = streams_[s];
    if (is_rr(kind_)) add_rr_counts(c, d, sending_);
    if (sending_) {
      c.errors += d.sent.errors.get();
      const std::int64_t started = d.outcome.start_wall_ns;
      if (c.start_wall_ns == 0 || (started && started < c.start_wall_ns)) c.start_wall_ns = started;
      c.elapsed_ns = std::max(c.elapsed_ns, d.outcome.elapsed_ns);
    } else {
      c.add_received(received_by(s, received));
      // The kernel's counter is 32-bit: the difference wraps right.
      if (kind_ == test_kind::udp_stream && d.fd)
        c.kernel_drops +=
            static_cast<std::uint32_t>(static_cast<std::uint32_t>(socket_drops(d.fd.get())) - d.drops_at_start);
    }
    c.batching = d.outcome.batching;
    zerocopy += d.outcome.zerocopy;
    if (!d.outcome.error.empty() && c.error.empty()) c.error = d.outcome.error;
  }
  if (zerocopy.sends > 0) c.batching += ", " + zerocopy_words(zerocopy);
  return c;
}

latency_histogram stream_set::latency() const {
  latency_histogram all;
  for (const data_stream& d : streams_)
    if (d.latency) all.merge(*d.latency);
  return all;
}

std::vector<tcp_sample> stream_set::tcp_samples() const {
  std::vector<int> fds;
  for (const data_stream& d : streams_) fds.push_back(d.fd ? d.fd.get() : -1);
  return read_tcp_samples(fds);
}

std::vector<tcp_sample> stream_set::tcp_end_samples() const {
  std::vector<tcp_sample> out;
  for (const data_stream& d : streams_) out.push_back(d.outcome.tcp_end.value_or(tcp_sample{}));
  return out;
}

std::string stream_set::congestion() const {
  return !streams_.empty() && streams_[0].fd ? congestion_of(streams_[0].fd.get()) : std::string();
}

}  // namespace nb
