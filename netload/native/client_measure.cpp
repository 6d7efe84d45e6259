#include "netload/native/client.hpp"
#include "netload/native/user_stop.hpp"

#include "core/base/clock.hpp"
#include "core/base/units.hpp"
#include "core/base/version.hpp"
#include "core/policy/verdict.hpp"

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/multiple_exceptions.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cmath>

namespace nb::load {

using namespace std::chrono_literals;

namespace {

constexpr std::int64_t drain_quiet_ns = 100'000'000;  // reverse UDP: drained once quiet this long
constexpr std::int64_t drain_max_ns = 2'000'000'000;
constexpr std::int64_t finish_grace_ns = 10'000'000'000;  // after the end

test_result asked(const client_options& o) {
  test_result r;
  name_test(r, o);
  r.host = o.host;
  r.port = o.port;
  r.client_version = version;
  if (is_rr(o.kind)) {  // a failed test's result still says which transaction
    r.rr.emplace();
    r.rr->request_size = o.message_size;
    r.rr->response_size = o.response_size;
    r.rr->burst = o.burst;
  }
  return r;
}

}  // namespace

bool load_test::interrupt(std::string signal) {
  if (traffic_end_wall_ns_ == 0) return false;
  if (stopping() || wall_ns() >= traffic_end_wall_ns_) return true;
  stop_signal_ = std::move(signal);
  stop_wall_ns_ = wall_ns();
  // In reverse our receivers count on until the server has drained (wait_local_done).
  if (!o_.reverse) streams_.request_stop();
  return true;
}

asio::awaitable<void> client_test::sleep_until_wall(std::int64_t t) {
  while (!stopping() && wall_ns() < t)
    co_await sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(t - wall_ns(), 50'000'000)));
}

asio::awaitable<void> client_test::send_end(side_counts counts) {
  if (end_sent_) co_return;
  end_sent_ = true;
  const message end_m = end_msg{std::move(counts)};
  co_await write_message(control_, control_mac_, end_m);
}

asio::awaitable<void> client_test::local_side() {
  const std::int64_t end = start_wall_ns_ + s_to_ns(o_.duration_s);
  co_await sleep_until_wall(start_wall_ns_ - snapshot_lead_ns);
  host_start_ = take_host_snapshot();
  co_await sleep_until_wall(start_wall_ns_);
  // At the server's wall-clock boundaries; after a stop the interval under way has no sample.
  if (o_.interval_s > 0) {
    const std::int64_t step = s_to_ns(o_.interval_s);
    for (std::uint32_t k = 0;; ++k) {
      std::int64_t boundary = std::min(start_wall_ns_ + (k + 1) * step, end);
      while (!stopping() && wall_ns() < boundary && !(streams_.all_done() && !o_.reverse))
        co_await sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(boundary - wall_ns(), 50'000'000)));
      if (wall_ns() < boundary) break;
      // Senders end as late as they woke: the last sample waits, so the intervals add up.
      if (boundary >= end && !o_.reverse) co_await wait_local_done();
      std::pair<std::uint64_t, std::uint64_t> sample;
      streams_.totals(sample.first, sample.second);
      own_samples_.push_back(sample);
      if (sends_tcp()) own_tcp_.push_back(streams_.tcp_samples());
      if (is_rr(o_.kind)) sample_latency();
      emit_intervals(false);
      if (boundary >= end) break;
    }
  }
  co_await wait_local_done();
  local_final_ = streams_.counts();
  co_await send_end(local_final_);
}

asio::awaitable<void> client_test::wait_local_done() {
  const std::int64_t end = start_wall_ns_ + s_to_ns(o_.duration_s);
  if (!o_.reverse) {
    while (!streams_.all_done() && wall_ns() < end + finish_grace_ns) co_await sleep_for(5ms);
    sample_host_end();
    // Past the grace (an RR client and a stalled server): stopped, so its counts are final.
    streams_.request_stop();
    while (!streams_.all_done()) co_await sleep_for(5ms);  // bounded: every loop polls its stop token
    co_return;
  }
  co_await sleep_until_wall(end);
  sample_host_end();  // before the drain: its quiet wait would dilute the CPU shares
  // Stopped early: the end stops the server; the result takes the counts after the drain.
  if (stopping()) co_await send_end(streams_.counts());
  std::int64_t give_up = wall_ns() + (o_.kind == test_kind::udp_stream ? drain_max_ns : finish_grace_ns);
  for (;;) {
    if (o_.kind == test_kind::tcp_stream) {
      if (streams_.all_done() || wall_ns() >= give_up) break;
    } else {
      std::int64_t last = 0;
      int queued = 0;
      for (std::uint32_t s = 0; s < o_.streams; ++s) {
        last = std::max(last, streams_[s].received.last_arrival_ns.get());
        queued += nb::queued_bytes(streams_[s].fd.get());
      }
      if ((queued == 0 && wall_ns() - last >= drain_quiet_ns) || wall_ns() >= give_up) break;
    }
    co_await sleep_for(5ms);
  }
  streams_.request_stop();
  while (!streams_.all_done()) co_await sleep_for(5ms);
}

void client_test::sample_latency() {
  latency_histogram now = streams_.latency();
  // The buckets too: the harness merges intervals exactly.
  const latency_histogram interval = now.since(latency_at_last_sample_);
  nlohmann::json l = interval.summary_json();
  l["histogram"] = interval.to_json();
  own_latency_.push_back(std::move(l));
  latency_at_last_sample_ = std::move(now);
}

void client_test::sample_host_end() {
  if (!host_end_) host_end_ = take_host_snapshot();
}

asio::awaitable<result_msg> client_test::read_server() {
  // Bounded in time and count, however the server spaces or multiplies its messages.
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::nanoseconds(std::max<std::int64_t>(0, start_wall_ns_ - wall_ns())) +
                       std::chrono::nanoseconds(s_to_ns(o_.duration_s)) + 60s;
  const std::uint64_t intervals = o_.interval_s > 0 ? static_cast<std::uint64_t>(o_.duration_s / o_.interval_s) + 2 : 0;
  for (;;) {
    const auto left = std::max<std::chrono::steady_clock::duration>(give_up - std::chrono::steady_clock::now(), 1ms);
    message m = co_await read_message(control_, control_mac_, left);
    if (auto* i = std::get_if<interval_msg>(&m)) {
      if (i->index >= intervals)
        throw protocol_error(
            fmt::format("server sent interval {}, where the test has {} at most", i->index, intervals));
      server_samples_[i->index] = *i;
      emit_intervals(false);
    } else if (auto* r = std::get_if<result_msg>(&m)) {
      co_return std::move(*r);
    } else if (auto* e = std::get_if<error_msg>(&m)) {
      throw protocol_error(fmt::format("server: {}", e->reason));
    } else {
      throw protocol_error(fmt::format("unexpected '{}' message during the test", message_type(m)));
    }
  }
}

void client_test::emit_intervals(bool final) {
  // When both sides sampled interval k, or at the end with what is known.
  const std::int64_t step = s_to_ns(o_.interval_s), end = start_wall_ns_ + s_to_ns(o_.duration_s);
  while (intervals_.size() < own_samples_.size()) {
    auto k = static_cast<std::uint32_t>(intervals_.size());
    auto server = server_samples_.find(k);
    if (server == server_samples_.end() && !final) return;
    interval_figures f;
    f.index = k;
    f.start_ns = start_wall_ns_ + k * step;
    f.end_ns = std::min(start_wall_ns_ + (k + 1) * step, end);
    auto own = own_samples_[k], own_prev = k ? own_samples_[k - 1] : std::pair<std::uint64_t, std::uint64_t>{};
    std::uint64_t sp = 0, sb = 0, spp = 0, sbp = 0;
    f.complete = server != server_samples_.end();
    if (f.complete) {
      sp = server->second.packets, sb = server->second.bytes;
      if (auto prev = server_samples_.find(k - 1); k && prev != server_samples_.end())
        spp = prev->second.packets, sbp = prev->second.bytes;
    }
    std::uint64_t own_p = own.first - own_prev.first, own_b = own.second - own_prev.second;
    std::uint64_t srv_p = f.complete ? sp - spp : 0, srv_b = f.complete ? sb - sbp : 0;
    f.sent_packets = o_.reverse ? srv_p : own_p;
    f.sent_bytes = o_.reverse ? srv_b : own_b;
    f.received_packets = o_.reverse ? own_p : srv_p;
    f.received_bytes = o_.reverse ? own_b : srv_b;
    f.tcp = tcp_interval(k);
    if (k < own_latency_.size()) f.latency = own_latency_[k];
    intervals_.push_back(f);
    if (events_.interval) events_.interval(f);
  }
}

const std::vector<tcp_sample>& client_test::tcp_at(std::uint32_t k) const {
  static const std::vector<tcp_sample> none;
  if (sends_tcp()) return k < own_tcp_.size() ? own_tcp_[k] : none;
  auto server = server_samples_.find(k);
  return server != server_samples_.end() ? server->second.tcp : none;
}

std::optional<tcp_figures> client_test::tcp_interval(std::uint32_t k) const {
  if (o_.kind != test_kind::tcp_stream || tcp_at(k).empty()) return std::nullopt;
  return summarize(tcp_at(k), k ? tcp_at(k - 1) : std::vector<tcp_sample>{});
}

std::optional<tcp_figures> client_test::tcp_end() const {
  if (o_.kind != test_kind::tcp_stream) return std::nullopt;
  std::vector<tcp_sample> end;
  std::string congestion;
  if (sends_tcp()) {
    end = streams_.tcp_end_samples();
    congestion = streams_.congestion();
  } else {
    end = server_final_.tcp;
    congestion = server_final_.congestion;
  }
  if (end.empty()) return std::nullopt;
  tcp_figures t = summarize(std::move(end));
  t.congestion = congestion;
  return t;
}

test_result client_test::result() const {
  test_result r = asked(o_);
  r.server_version = ready_.server_version;
  r.requested_start = static_cast<double>(requested_start_ns_) / 1e9;
  r.path_mtu = path_mtu_;
  r.mss = mss_;
  r.intervals = intervals_;
  r.tcp = tcp_end();
  const side_counts& snd = o_.reverse ? server_final_.counts : local_final_;
  const side_counts& rcv = o_.reverse ? local_final_ : server_final_.counts;
  r.actual_start = static_cast<double>(snd.start_wall_ns) / 1e9;
  const double secs = ns_to_s(snd.elapsed_ns);
  r.sender =
      sender_figures(snd, secs, snd.start_wall_ns, o_.reverse ? ready_.sndbuf : local_buffer_granted_, snd.batching);
  r.receiver = receiver_figures(rcv, secs, o_.reverse ? local_buffer_granted_ : ready_.rcvbuf, rcv.batching);
  r.receive_engine = rcv.receive_engine.empty() ? "socket" : rcv.receive_engine;
  if (r.receive_engine != "socket") {
    r.socket_received.emplace(rcv.socket_packets, rcv.socket_bytes);
    if (o_.message_size >= payload_header_size) r.seq_gaps = rcv.seq_gaps;
  }
  r.loss.drops_shared = rcv.drops_shared;
  reconcile(r, rcv.kernel_drops, is_udp(o_.kind) ? rcv.buffers : 0);
  if (is_rr(o_.kind)) {
    r.rr.emplace();
    r.rr->request_size = o_.message_size;
    r.rr->response_size = o_.response_size;
    r.rr->burst = o_.burst;
    r.rr->latency = streams_.latency();
    r.rr->transactions_per_second = per_second(local_final_.responses, secs);
    reconcile_rr(r, local_final_, server_final_.counts);
  }
  if (o_.omit_s > 0) leave_out_start(r, snd);  // the reconciliation counts the whole run
  // After reconcile (TCP messages).
  if (o_.target_pps() > 0)
    r.target = check_target(o_.target_pps(), o_.message_size, r.sender, o_.kind == test_kind::tcp_stream, o_.streams,
                            r.omit ? &*r.omit : nullptr);
  if (o_.kind == test_kind::udp_stream && o_.message_size >= payload_header_size) {
    r.out_of_order = rcv.out_of_order;
    if (rcv.jitter_ns >= 0) r.jitter_ms = rcv.jitter_ns / 1e6;
  }
  std::string error = !snd.error.empty() ? snd.error : rcv.error;
  r.ok = error.empty();
  r.error = error;
  std::optional<host_delta> local;
  if (host_start_ && host_end_) {
    local = host_delta_between(*host_start_, *host_end_);
    local->pinned_cpu = o_.local_cpu;
  }
  (o_.reverse ? r.hosts.receiver : r.hosts.sender) = std::move(local);
  (o_.reverse ? r.hosts.sender : r.hosts.receiver) = server_final_.host;
  r.verdict = judge_limit(r);  // after the target and both hosts
  if (stopping()) note_interruption(r);
  r.receiver_note = figure_meaning(r);  // after the verdict
  if (o_.kind == test_kind::tcp_stream) r.receive = receive_;
  if (o_.kind == test_kind::udp_stream) r.segmentation = segmentation_;
  if (r.segmentation) settle_segmentation(*r.segmentation, r.sender.batching);
  return r;
}

void client_test::note_interruption(test_result& r) const {
  r.interrupted = interruption{stop_signal(), std::max(0.0, ns_to_s(stop_wall_ns() - start_wall_ns_)), o_.duration_s};
  if (stop_wall_ns() <= start_wall_ns_) {  // nothing sent: no figures to judge
    r.ok = false;
    r.error = fmt::format("interrupted by {} before the start instant: nothing was sent", stop_signal());
    r.verdict.reset();
    r.target.reset();
  }
}

void client_test::leave_out_start(test_result& r, const side_counts& sender) const {
  // The left-out part ends at an interval boundary (cli.cpp).
  const auto k = static_cast<std::uint32_t>(std::lround(o_.omit_s / o_.interval_s)) - 1;
  const auto server = server_samples_.find(k);
  if (k >= own_samples_.size() || server == server_samples_.end()) return;  // ended before it
  const std::pair<std::uint64_t, std::uint64_t> own = own_samples_[k],
                                                srv{server->second.packets, server->second.bytes};
  const auto& sent_at = o_.reverse ? srv : own;
  const auto& received_at = o_.reverse ? own : srv;
  r.omit = omit_figures{o_.omit_s, r.sender.packets, r.sender.bytes, r.receiver.packets, r.receiver.bytes};
  // From the sample to the sender's end, on the sender's clock: a sender that woke late also ends late.
  const std::int64_t instant = o_.reverse ? server_instant() : start_wall_ns_;
  const double window_s =
      std::max(0.0, ns_to_s(sender.start_wall_ns + sender.elapsed_ns - instant - s_to_ns(o_.omit_s)));
  auto window = [&](flow_figures& f, std::pair<std::uint64_t, std::uint64_t> at) {
    f.bytes -= std::min(at.second, f.bytes);
    // TCP's messages are bytes / message size (reconcile).
    f.packets =
        o_.kind == test_kind::tcp_stream ? f.bytes / o_.message_size : f.packets - std::min(at.first, f.packets);
    f.seconds = window_s;
    compute_rates(f);
  };
  window(r.sender, sent_at);
  window(r.receiver, received_at);
}

std::string describe_failure(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const asio::multiple_exceptions& x) {
    return describe_failure(x.first_exception());
  } catch (const boost::system::system_error& x) {
    if (x.code() == asio::error::eof || x.code() == asio::error::connection_reset)
      return "the server closed the control connection during the test";
    return x.what();
  } catch (const std::exception& x) {
    return x.what();
  }
}

test_result failed_result(const client_options& o, std::string reason) {
  test_result r = asked(o);
  r.error = std::move(reason);
  return r;
}

test_result run_test(asio::io_context& io, const client_options& options, client_events events) {
  const std::function<int()> stop_before = events.stop_before;
  return run_to_end(io, std::make_shared<client_test>(io, options, std::move(events)), options, stop_before);
}

}  // namespace nb::load
