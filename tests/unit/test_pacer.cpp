// The pacer and the paced sender: a sender that starts or wakes late never sends its backlog in a burst.
// Real clocks: every bound below is an upper bound on what may leave by an instant measured *after* the
// count was read, so a loaded machine (a thread preempted) only makes the bounds looser, never the test
// fail; the lower bounds are small, there only so a pacer that sends nothing fails.
#include "core/base/clock.hpp"
#include "core/data/pacer.hpp"
#include "core/data/streams.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/flow.hpp"

#include <catch2/catch.hpp>

#include <thread>

using namespace nb;

namespace {

constexpr double pps = 20'000;

// Calls due() for `window_ns` as a sender would, sending all it is given, from `done` sent so far;
// returns the new total.
std::uint64_t drive(pacer& p, std::int64_t window_ns, std::uint64_t done = 0) {
  std::stop_source never;
  const std::int64_t until = mono_ns() + window_ns;
  while (mono_ns() < until) done += p.due(done, 1024, until, never.get_token());
  return done;
}

}  // namespace

TEST_CASE("pacer: a sender that fell behind catches up at most 2 % above the rate - after 10 ms of datagrams at most",
          "[pacer]") {
  // 100 ms behind: 2000 datagrams due at once, and the caller could send 1024 in one call (a UDP sender's
  // batch at -m 1, which once was the bucket's depth: 51 ms of datagrams at this rate). The bucket holds
  // 10 ms of them at most, then refills at 1.02 x the rate.
  const std::int64_t t0 = mono_ns();
  pacer p(pps, t0 - 100'000'000, 1024);
  std::stop_source never;
  const std::size_t first = p.due(0, 1024, t0 + 1'000'000'000, never.get_token());
  CHECK(first >= 1);
  CHECK(static_cast<double>(first) <= pps * 0.010 + 1);
  const std::uint64_t total = drive(p, 50'000'000, first);
  const double elapsed_s = ns_to_s(mono_ns() - t0);
  CHECK(static_cast<double>(total) <= pps * 0.010 + 1 + pps * pacing_catch_up * elapsed_s);
  CHECK(total > first);  // it does catch up
}

TEST_CASE("pacer: one message per call (TCP) still has room for two - a late wake-up is not lost for good", "[pacer]") {
  // 400 messages/s, 50 ms behind: 21 are due. A bucket of one would give them one at a time, each a full
  // refill apart, so every wake-up later than 2 % of the interval (50 us) would be lost for good; with room
  // for two the time lost refills the second.
  const std::int64_t t0 = mono_ns();
  std::stop_source never;
  pacer fast(400, t0 - 50'000'000);
  CHECK(fast.due(0, 4, t0 + 1'000'000'000, never.get_token()) == 2);
  // Never more than 10 ms of the rate: at 150 messages/s that is one and a half, so one at a time.
  pacer slow(150, t0 - 50'000'000);
  CHECK(slow.due(0, 4, t0 + 1'000'000'000, never.get_token()) == 1);
}

TEST_CASE("pacer: a sender on schedule wakes when its next message is due, not one interval later", "[pacer]") {
  // 20 messages/s, the test ending at 100 ms: message 0 at the start, message 1 at 50 ms, before the end.
  // Waking one interval late (the old off-by-one: at 100 ms) found the test over and sent nothing, and on
  // a longer test put every on-schedule sender one message behind, half its sends through the catch-up
  // bucket. The lower bound is exact (a sleep never ends early); 50 ms is left to a loaded machine.
  const std::int64_t t0 = mono_ns();
  const std::int64_t end = t0 + 100'000'000;
  std::stop_source never;
  pacer p(20, t0);
  REQUIRE(p.due(0, 1, end, never.get_token()) == 1);
  CHECK(p.due(1, 1, end, never.get_token()) == 1);
  CHECK(mono_ns() - t0 >= 50'000'000);
}

TEST_CASE("pacer: a sender on schedule gets the rate and nothing ahead of it", "[pacer]") {
  const std::int64_t t0 = mono_ns();
  pacer p(pps, t0);
  const std::uint64_t sent = drive(p, 100'000'000);
  const double elapsed_s = ns_to_s(mono_ns() - t0);
  CHECK(static_cast<double>(sent) <= pps * elapsed_s + 2);  // counting from the start: one datagram ahead at most
  CHECK(sent >= 10);
}

TEST_CASE("paced sender: a start instant passed while the thread slept leaves no backlog - elapsed is the sending time",
          "[pacer][streams]") {
  // A thread that wakes 300 ms after the agreed instant: it sends for the whole duration from its wake-up,
  // at the rate, and reports that time; it does not try to send the 300 ms it missed.
  fd_handle rx = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
  set_recv_buffer(rx.get(), 4 << 20);
  fd_handle tx = connect_udp(endpoint::local_of(rx.get()));
  stream_plan plan;
  plan.fd = tx.get();
  plan.message_size = 64;
  plan.pps = pps;
  plan.start_wall_ns = wall_ns() - 300'000'000;
  plan.duration_ns = 200'000'000;
  plan.batch = default_batch(plan.message_size);
  send_counters counters;
  stream_outcome out;
  const std::int64_t t0 = mono_ns();
  std::jthread sender([&](std::stop_token st) { run_udp_sender(st, plan, counters, out); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::uint64_t early = counters.packets.get();
  const double early_s = ns_to_s(mono_ns() - t0);
  sender.join();
  INFO("error: " << out.error);
  REQUIRE(out.error.empty());
  CHECK(static_cast<double>(early) <= pps * early_s + 2);  // no burst at the start: on schedule from the wake-up
  CHECK(out.elapsed_ns >= plan.duration_ns);
  CHECK(out.elapsed_ns < plan.duration_ns + 1'000'000'000);  // generous: the thread may be preempted at the end
  const auto sent = counters.packets.get();
  CHECK(static_cast<double>(sent) <= pps * ns_to_s(out.elapsed_ns) + 2);
  CHECK(static_cast<double>(sent) >= 0.1 * pps * ns_to_s(plan.duration_ns));
  CHECK(out.start_wall_ns >= plan.start_wall_ns + 300'000'000);
}
