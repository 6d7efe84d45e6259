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

// In slices that look at the stop token: the instant may be an hour away.
void begin_stream(const std::stop_token& stop, const stream_plan& plan, stream_outcome& out, std::int64_t& start_mono,
                  std::int64_t& end_mono) {
  while (!stop.stop_requested() && wall_ns() < plan.start_wall_ns)
    sleep_until_ns(CLOCK_REALTIME, std::min(plan.start_wall_ns, wall_ns() + poll_ns));
  start_mono = mono_ns();
  out.start_wall_ns = wall_ns();
  end_mono = start_mono + plan.duration_ns;
}

namespace {

// An unconnected socket (netserve's port) has no route of its own: the destination's.
std::string mtu_error(int fd, int family, const std::optional<endpoint>& dest, std::size_t size) {
  int mtu = path_mtu(fd, family);
  if (mtu == 0 && dest) {
    try {
      mtu = path_mtu_to(*dest);
      family = dest->unmapped().family();
    } catch (const std::system_error&) {
    }
  }
  return fmt::format(
      "message of {} bytes does not fit the path MTU {} (largest UDP payload {}); "
      "the datagram was not fragmented",
      size, mtu, max_udp_payload(mtu, family));
}

// A CPU outside this process's set is no error (clients name their own), but must not be claimed.
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
    send_outcome r = sender.send(n, attempted, wall_ns());  // refused ones keep their numbers
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

constexpr std::uint64_t zerocopy_read_every = 32;
constexpr std::int64_t zerocopy_final_wait_ns = 2'000'000'000;

std::optional<zerocopy_completions> start_zerocopy(const stream_plan& plan, stream_outcome& out) {
  if (plan.send_call != tcp_send_call::zerocopy) return std::nullopt;
  std::string why;
  if (enable_zerocopy(plan.fd, why)) return zerocopy_completions(plan.fd);
  out.batching = fmt::format("send, no zerocopy (SO_ZEROCOPY: {})", why);
  return std::nullopt;
}

// The last completions come after the end; a poll that returns at once (peer gone) must not spin.
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
  tcp_message_source source(plan.message_size, plan.send_call, sendfile_piece_for(congestion_of(plan.fd)));
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
      // Unread completions hold the socket's option memory.
      if (errno == ENOBUFS && zc) {
        // Nothing outstanding: no completion will free anything, and waiting would pass as success.
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
    // Only bytes: messages are counted from them, as the receiver does.
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
  std::error_code ignored;
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
  // Nobody looks at the bytes: MSG_TRUNC saves the copy, though copying wins on loopback for one stream
  // (bench/README.md#receive-mode).
  const int flags = plan.recv_copy ? 0 : MSG_TRUNC;
  out.batching = fmt::format("recv {}{}", format_size(size), plan.recv_copy ? "" : ", discarded in the kernel");
  std::vector<unsigned char> buffer(size);
  while (!stop.stop_requested()) {
    ssize_t r = ::recv(fd, buffer.data(), buffer.size(), flags);
    if (r == 0) break;
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

// A UDP_RR server's answers come from its port (netserve/server/served_test.cpp).
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
  if (is_rr(kind) && sending_) {
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
    if (sending_ || kind_ == test_kind::tcp_rr) {  // a TCP_RR server counts like a sender
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
