#include "netload/iperf3/iperf3_peer.hpp"

#include "core/base/clock.hpp"
#include "core/base/version.hpp"
#include "core/policy/verdict.hpp"
#include "core/sys/kernel_features.hpp"
#include "core/wire/native/frame_io.hpp"

#include <fmt/format.h>

#include <linux/sockios.h>
#include <sys/ioctl.h>

namespace nb::load {

using namespace std::chrono_literals;
namespace i3 = iperf3;

namespace {

constexpr std::int64_t quiet_ns = 100'000'000;  // reverse: drained once quiet this long
constexpr std::int64_t drain_max_ns = 3'000'000'000;
constexpr std::int64_t finish_grace_ns = 10'000'000'000;  // our senders end by then

// As iperf_add_stream numbers them: 1, 3, 4, 5...
std::int64_t stream_id(std::size_t s) { return s == 0 ? 1 : static_cast<std::int64_t>(s) + 2; }

int unacknowledged(int fd) {
  int n = 0;
  return ::ioctl(fd, SIOCOUTQ, &n) == 0 ? n : 0;
}

}  // namespace

void iperf3_client::start_threads() {
  for (std::uint32_t s = 0; s < o_.streams; ++s) {
    stream_plan plan = common_stream_plan(o_, streams_[s].fd.get(), s, start_wall_ns_);
    plan.payload = payload_format::iperf3_64;
    streams_.start(s, plan);
  }
}

// iperf3 sends nothing until the end: an interval has this side's figures only.
void iperf3_client::sample(bool final_sample) {
  if (o_.interval_s <= 0) return;
  const std::int64_t step = s_to_ns(o_.interval_s);
  std::pair<std::uint64_t, std::uint64_t> now;
  streams_.totals(now.first, now.second);
  const auto k = static_cast<std::uint32_t>(own_samples_.size());
  const auto prev = k ? own_samples_.back() : std::pair<std::uint64_t, std::uint64_t>{};
  own_samples_.push_back(now);
  interval_figures f;
  f.index = k;
  f.start_ns = start_wall_ns_ + k * step;
  f.end_ns = final_sample ? std::min(wall_ns(), end_wall_ns_) : std::min(start_wall_ns_ + (k + 1) * step, end_wall_ns_);
  (o_.reverse ? f.received_packets : f.sent_packets) = now.first - prev.first;
  (o_.reverse ? f.received_bytes : f.sent_bytes) = now.second - prev.second;
  intervals_.push_back(f);
  if (events_.interval) events_.interval(f);
}

asio::awaitable<void> iperf3_client::run_data() {
  const std::int64_t step = o_.interval_s > 0 ? s_to_ns(o_.interval_s) : 0;
  std::int64_t next = step ? start_wall_ns_ + step : end_wall_ns_;
  while (!stopping() && wall_ns() < end_wall_ns_ && !(!o_.reverse && streams_.all_done())) {
    if (step && wall_ns() >= next && next < end_wall_ns_) {
      sample(false);
      next += step;
    }
    co_await check_control();
    co_await sleep_for(std::chrono::nanoseconds(
        std::clamp<std::int64_t>(std::min(next, end_wall_ns_) - wall_ns(), 1'000'000, 20'000'000)));
  }
  co_await settle();
  seconds_ = ns_to_s(std::min(wall_ns(), end_wall_ns_) - start_wall_ns_);
  if (stopping()) seconds_ = std::max(0.0, ns_to_s(stop_wall_ns() - start_wall_ns_));
  co_await send_state(i3::state::test_end);
  if (o_.reverse) {  // what it had in flight at TEST_END still counts
    const std::int64_t give_up = wall_ns() + drain_max_ns;
    std::uint64_t last_bytes = ~0ULL;
    std::int64_t last_change = wall_ns();
    while (wall_ns() < give_up && wall_ns() - last_change < quiet_ns) {
      std::uint64_t p = 0, b = 0;
      streams_.totals(p, b);
      if (b != last_bytes) last_bytes = b, last_change = wall_ns();
      co_await sleep_for(5ms);
    }
    streams_.request_stop();
  }
  while (!streams_.all_done()) co_await sleep_for(5ms);
  own_ = streams_.counts();
  if (step) sample(true);
}

// Forward: what we sent reaches the server before TEST_END stops its counting.
asio::awaitable<void> iperf3_client::settle() {
  if (o_.reverse) co_return;
  const std::int64_t give_up = end_wall_ns_ + finish_grace_ns;
  while (!streams_.all_done() && wall_ns() < give_up) co_await sleep_for(5ms);
  streams_.request_stop();
  while (!streams_.all_done()) co_await sleep_for(5ms);
  if (o_.kind == test_kind::tcp_stream) {
    const std::int64_t acked_by = wall_ns() + drain_max_ns;
    for (std::uint32_t s = 0; s < o_.streams; ++s)
      while (unacknowledged(streams_[s].fd.get()) > 0 && wall_ns() < acked_by) co_await sleep_for(2ms);
  }
  co_await sleep_for(std::chrono::nanoseconds(quiet_ns));
}

i3::results iperf3_client::our_results() const {
  i3::results r;
  const bool tcp = o_.kind == test_kind::tcp_stream;
  r.sender_has_retransmits = o_.reverse ? -1 : (tcp ? 1 : 0);
  const std::vector<tcp_sample> ends = !o_.reverse && tcp ? streams_.tcp_end_samples() : std::vector<tcp_sample>{};
  if (!ends.empty()) r.congestion_used = streams_.congestion();
  for (std::uint32_t s = 0; s < o_.streams; ++s) {
    i3::stream_result x;
    x.id = stream_id(s);
    x.end_time = seconds_;
    if (!o_.reverse) {
      x.bytes = streams_[s].sent.bytes.get();
      if (!tcp) x.packets = streams_[s].sent.packets.get();
      if (s < ends.size() && ends[s].retransmits) x.retransmits = static_cast<std::int64_t>(*ends[s].retransmits);
      else if (tcp) x.retransmits = 0;
    } else {
      const flow_totals f = streams_.stream_received(s);
      x.bytes = f.bytes;
      if (!tcp) {  // as iperf3's receiver counts
        x.packets = f.next_seq;
        x.errors = f.next_seq > f.packets ? f.next_seq - f.packets : 0;
        x.jitter = f.sequenced > 1 ? f.jitter_ns / 1e9 : 0;
      }
    }
    r.streams.push_back(x);
  }
  return r;
}

test_result iperf3_client::result() const {
  test_result r = failed_result(o_, "");
  const bool udp = o_.kind == test_kind::udp_stream;
  r.server_version = counted_by_;
  r.receiver_counted_by =
      o_.reverse ? fmt::format("netload {} (the sender's figures: {})", version, counted_by_) : counted_by_;
  r.requested_start = static_cast<double>(requested_start_ns_) / 1e9;
  r.path_mtu = path_mtu_;
  r.mss = mss_;
  r.intervals = intervals_;
  side_counts peer;
  double peer_seconds = 0;
  for (const i3::stream_result& x : theirs_.streams) {
    peer.bytes += x.bytes;
    peer.packets += o_.reverse ? x.packets : (x.packets > x.errors ? x.packets - x.errors : 0);
    peer_seconds = std::max(peer_seconds, x.end_time - x.start_time);
  }
  const side_counts& snd = o_.reverse ? peer : own_;
  const side_counts& rcv = o_.reverse ? own_ : peer;
  const double secs = o_.reverse ? (peer_seconds > 0 ? peer_seconds : seconds_) : ns_to_s(own_.elapsed_ns);
  r.actual_start = static_cast<double>(o_.reverse ? start_wall_ns_ : own_.start_wall_ns) / 1e9;
  // The batching says a stock server counts no socket drops.
  r.sender = sender_figures(snd, secs, o_.reverse ? start_wall_ns_ : own_.start_wall_ns,
                            o_.reverse ? peer_buffer_ : local_buffer_granted_, o_.reverse ? "iperf3" : own_.batching);
  r.receiver = receiver_figures(rcv, secs, o_.reverse ? local_buffer_granted_ : peer_buffer_,
                                o_.reverse ? own_.batching
                                : udp      ? fmt::format("iperf3, {}", no_drop_count)
                                           : "iperf3");
  r.receive_engine = "socket";
  reconcile(r, o_.reverse ? own_.kernel_drops : 0, o_.reverse && udp ? own_.buffers : 0);
  if (o_.target_pps() > 0)
    r.target = check_target(o_.target_pps(), o_.message_size, r.sender, o_.kind == test_kind::tcp_stream, o_.streams);
  if (udp && o_.reverse) {
    r.out_of_order = own_.out_of_order;
    if (own_.jitter_ns >= 0) r.jitter_ms = own_.jitter_ns / 1e6;
  } else if (udp && !theirs_.streams.empty()) {
    double jitter = 0;
    for (const i3::stream_result& x : theirs_.streams) jitter = std::max(jitter, x.jitter);
    r.jitter_ms = jitter * 1e3;
  }
  if (o_.kind == test_kind::tcp_stream && !o_.reverse) {
    if (std::vector<tcp_sample> end = streams_.tcp_end_samples(); !end.empty()) {
      r.tcp = summarize(std::move(end));
      r.tcp->congestion = streams_.congestion();
    }
  }
  r.ok = own_.error.empty();
  r.error = own_.error;
  r.verdict = judge_limit(r);
  r.receiver_note = figure_meaning(r);
  r.receive = receive_;
  r.segmentation = segmentation_;
  if (r.segmentation) settle_segmentation(*r.segmentation, r.sender.batching);
  if (stopping()) r.interrupted = interruption{stop_signal(), seconds_, o_.duration_s};
  return r;
}

}  // namespace nb::load
