#include "core/result/result.hpp"
#include "core/wire/native/flow.hpp"

#include <catch2/catch.hpp>

using namespace nb;

namespace {
test_result udp(std::uint64_t sent, std::uint64_t received) {
  test_result r;
  r.ok = true;
  r.sender.packets = sent;
  r.receiver.packets = received;
  return r;
}
}  // namespace

TEST_CASE("loss splits into receiver kernel drops and path loss - and reconciles", "[result]") {
  auto r = udp(4'532'554, 1'099'999);  // the procedure's example: 4.5 M sent, 1.1 M received
  reconcile(r, 432'555, 1'099'999);
  CHECK(r.loss.packets == 3'432'555);
  CHECK(r.loss.receiver_kernel_drops == 432'555);
  CHECK(r.loss.path == 3'000'000);
  CHECK(r.loss.reconciles);
  CHECK_FALSE(r.loss.drops_estimated);
  CHECK(r.loss.percent == Approx(75.73).margin(0.01));
}

TEST_CASE("drops never exceed the loss - even when the socket was shared", "[result]") {
  auto r = udp(1000, 990);
  reconcile(r, 50, 990);
  CHECK(r.loss.receiver_kernel_drops == 10);
  CHECK(r.loss.path == 0);
  CHECK(r.loss.reconciles);
}

TEST_CASE("with GRO the kernel counts dropped buffers: datagrams are estimated and flagged", "[result]") {
  auto r = udp(64'000, 60'800);  // 950 buffers of 64 datagrams received, 50 buffers dropped
  reconcile(r, 50, 950);
  CHECK(r.loss.drops_estimated);
  CHECK(r.loss.kernel_drop_buffers == 50);
  CHECK(r.loss.receiver_kernel_drops == 3200);
  CHECK(r.loss.path == 0);
  CHECK(r.loss.reconciles);
}

TEST_CASE("more received than sent does not reconcile", "[result]") {
  auto r = udp(100, 101);
  reconcile(r, 0, 101);
  CHECK_FALSE(r.loss.reconciles);
  CHECK_THAT(r.loss.note, Catch::Contains("1 more datagrams than were sent"));
}

TEST_CASE("TCP reconciles on bytes", "[result]") {
  test_result r;
  r.kind = test_kind::tcp_stream;
  r.sender.packets = r.receiver.packets = 10;
  r.sender.bytes = 1000;
  r.receiver.bytes = 999;
  reconcile(r, 0, 0);
  CHECK_FALSE(r.loss.reconciles);
}

TEST_CASE("results survive JSON and bad JSON is refused by field", "[result]") {
  auto r = udp(5'000'000'000ULL, 4'999'999'999ULL);  // past 32 bits
  r.sender.seconds = r.receiver.seconds = 300;
  compute_rates(r.sender);
  compute_rates(r.receiver);
  reconcile(r, 1, 4'999'999'999ULL);
  r.jitter_ms = 0.25;
  r.intervals.push_back({0, 1, 2, 3, 4, 5, 6, true});
  auto back = result_from_json(to_json(r));
  CHECK(back.sender.packets == 5'000'000'000ULL);
  CHECK(back.receiver.pps == Approx(r.receiver.pps));
  CHECK(back.loss.receiver_kernel_drops == 1);
  CHECK(back.jitter_ms == 0.25);
  CHECK_FALSE(back.out_of_order);
  REQUIRE(back.intervals.size() == 1);
  CHECK(back.intervals[0].received_packets == 5);

  auto j = to_json(r);
  j["sender"]["packets"] = -1;
  CHECK_THROWS_WITH(result_from_json(j), Catch::Contains("'packets' must be a non-negative integer"));
  j = to_json(r);
  j["schema"] = "iperf3";
  CHECK_THROWS_AS(result_from_json(j), std::runtime_error);
}

TEST_CASE("sequence numbers give out-of-order counts and RFC 3550 jitter", "[flow]") {
  recv_counters c;
  unsigned char d[16];
  auto feed = [&](std::uint64_t seq, std::int64_t sent, std::int64_t arrived) {
    write_payload_header(d, seq, sent);
    c.on_receive(d, 16, 0, 16, arrived);
  };
  feed(0, 1000, 2000);
  feed(1, 2000, 3000);
  feed(3, 4000, 5000);
  feed(2, 3000, 5100);  // late: out of order, transit 2100 vs 1000
  CHECK(c.packets.get() == 4);
  CHECK(c.next_seq.get() == 4);
  CHECK(c.out_of_order.get() == 1);
  CHECK(c.sequenced.get() == 4);
  // J = J + (|D| - J) / 16 over D = 0, 0, 1100
  CHECK(c.jitter_ns.get() == Approx(1100.0 / 16));
}

TEST_CASE("a GRO buffer counts as the datagrams it carries", "[flow]") {
  recv_counters c;
  std::vector<unsigned char> buf(64 * 20);
  for (std::uint64_t i = 0; i < 20; ++i) write_payload_header(&buf[i * 64], i, 0);
  c.on_receive(buf.data(), buf.size() - 10, 64, buf.size(), 1);  // 19 full segments and a short last one
  CHECK(c.packets.get() == 20);
  CHECK(c.bytes.get() == buf.size() - 10);
  CHECK(c.buffers.get() == 1);
  CHECK(c.next_seq.get() == 20);
  recv_counters ones;
  unsigned char one[64] = {};
  ones.on_receive(one, 64, 1, 64, 1);  // 64 one-byte datagrams, no headers
  CHECK(ones.packets.get() == 64);
  CHECK(ones.sequenced.get() == 0);
}

TEST_CASE("TCP messages are bytes / message size on both sides - per-write counts cannot fail reconciliation",
          "[result]") {
  // Five streams of 100000-byte writes, each ending part-way into its second write: 5 whole writes were
  // sent, but the 5 x 60000 remainder bytes make three more messages of the 800000 bytes received.
  test_result r;
  r.kind = test_kind::tcp_stream;
  r.message_size = 100'000;
  r.sender.bytes = r.receiver.bytes = 800'000;
  r.sender.packets = 5;  // as a per-write count had it
  r.receiver.packets = 8;
  r.sender.seconds = r.receiver.seconds = 0.5;
  reconcile(r, 0, 0);
  CHECK(r.loss.reconciles);
  CHECK(r.sender.packets == 8);
  CHECK(r.receiver.packets == 8);
  CHECK(r.sender.pps == Approx(16));
  CHECK(r.loss.packets == 0);
  CHECK(r.loss.note.empty());

  r.receiver.bytes = 750'000;  // a stream cut short: loss in messages and percent comes from the bytes
  reconcile(r, 0, 0);
  CHECK_FALSE(r.loss.reconciles);
  CHECK(r.receiver.packets == 7);
  CHECK(r.loss.packets == 1);
  CHECK(r.sender.packets == r.receiver.packets + r.loss.packets);
  CHECK(r.loss.percent == Approx(6.25));
  CHECK(r.loss.note == "TCP delivered 750000 of 800000 bytes");

  r.receiver.bytes = 800'001;
  reconcile(r, 0, 0);
  CHECK_FALSE(r.loss.reconciles);
  CHECK(r.loss.note == "receiver counted 1 more bytes than were sent");
  CHECK(tcp_messages(799'999, 100'000) == 7);
  CHECK(tcp_messages(5, 0) == 0);
}

TEST_CASE("a paced test's target: met within 1 % of the payload rate - either way", "[result][target]") {
  auto sent = [](double pps, std::uint32_t size) {
    flow_figures f;
    f.seconds = 10;
    f.packets = static_cast<std::uint64_t>(pps * f.seconds);
    f.bytes = f.packets * size;
    compute_rates(f);
    return f;
  };
  auto missed = check_target(100'000, 100, sent(24'812.3, 100));
  CHECK(missed.requested_pps == 100'000);
  CHECK(missed.achieved_pps == Approx(24'812.3));
  CHECK(missed.requested_bits_per_second == Approx(80e6));
  CHECK(missed.achieved_bits_per_second == Approx(24'812.3 * 800));
  CHECK(missed.error_percent == Approx(-75.1877).margin(1e-3));
  CHECK_FALSE(missed.met);
  CHECK(check_target(100'000, 100, sent(99'500, 100)).met);
  CHECK(check_target(100'000, 100, sent(100'900, 100)).met);
  CHECK_FALSE(check_target(100'000, 100, sent(101'100, 100)).met);  // above is a miss too
  CHECK_FALSE(check_target(100'000, 100, sent(98'900, 100)).met);
  CHECK_FALSE(check_target(100'000, 100, flow_figures{}).met);  // nothing sent: -100 %

  // TCP: the error is on bytes, so a stream's last partial message does not count against it.
  flow_figures tcp;
  tcp.seconds = 1;
  tcp.bytes = 9'950'000;  // 99.5 messages of 100000 bytes: 99 whole ones
  tcp.packets = tcp_messages(tcp.bytes, 100'000);
  compute_rates(tcp);
  auto t = check_target(100, 100'000, tcp);
  CHECK(t.error_percent == Approx(-0.5));
  CHECK(t.met);

  // A ceiling (TCP, as iperf's TCP -b): under it is met however far; only above it by more than 1 % is not.
  auto under = check_target(100'000, 100, sent(62'000, 100), true);
  CHECK(under.ceiling);
  CHECK(under.error_percent == Approx(-38.0));
  CHECK(under.met);
  CHECK(check_target(100'000, 100, sent(100'900, 100), true).met);
  CHECK_FALSE(check_target(100'000, 100, sent(101'100, 100), true).met);
  CHECK_FALSE(check_target(100'000, 100, sent(62'000, 100)).ceiling);

  // --omit: the ceiling counts from the sender's start. Left-out seconds TCP held under it leave the window room
  // to catch up (the pacer's 1.02x); the same window after left-out seconds at the ceiling is over it.
  const flow_figures catching_up = sent(102'000, 100);  // 10 s at +2 %
  CHECK_FALSE(check_target(100'000, 100, catching_up, true).met);
  const omit_figures slow{.seconds = 2, .sent_packets = 1'200'000, .sent_bytes = 120'000'000};  // 90 % at first
  const auto caught_up = check_target(100'000, 100, catching_up, true, 1, &slow);
  CHECK(caught_up.met);
  CHECK(caught_up.error_percent == Approx(2.0));  // the figures stay the window's
  const omit_figures at_ceiling{.seconds = 2, .sent_packets = 1'220'000, .sent_bytes = 122'000'000};
  CHECK_FALSE(check_target(100'000, 100, catching_up, true, 1, &at_ceiling).met);
  // Faster than the catch-up is a fault even with room from the left-out seconds (8 MB of 20 MB before it).
  const omit_figures slower{.seconds = 2, .sent_packets = 1'160'000, .sent_bytes = 116'000'000};
  CHECK_FALSE(check_target(100'000, 100, sent(108'000, 100), true, 1, &slower).met);
  CHECK(check_target(100'000, 100, sent(103'000, 100), true, 1, &slower).met);  // 1.02 x 1.01 and a burst
  CHECK_FALSE(check_target(100'000, 100, catching_up, false, 1, &slow).met);    // a UDP target is the window's

  // The message each stream's pacer begins while it is due is no excess: 10 Mbit/s of 1-MiB messages for
  // 1 s is 1.19 messages; the second one, under way at the end, puts the rate 68 % above the ceiling.
  flow_figures big;
  big.seconds = 1;
  big.bytes = 2u << 20;
  big.packets = 2;
  compute_rates(big);
  const double one_mib_pps = 10e6 / 8 / (1u << 20);
  CHECK(check_target(one_mib_pps, 1u << 20, big, true, 1).error_percent > 60);
  CHECK(check_target(one_mib_pps, 1u << 20, big, true, 1).met);
  big.bytes = 3u << 20;  // a whole message beyond the one in progress: over the ceiling
  compute_rates(big);
  CHECK_FALSE(check_target(one_mib_pps, 1u << 20, big, true, 1).met);
  CHECK(check_target(one_mib_pps, 1u << 20, big, true, 2).met);  // two streams, a message in progress each
}

TEST_CASE("the target's ceiling reads back - and results from before it read as targets", "[result][target]") {
  test_result r;
  r.kind = test_kind::tcp_stream;
  r.ok = true;
  r.sender.bytes = r.receiver.bytes = 1000;
  r.sender.seconds = r.receiver.seconds = 1;
  compute_rates(r.sender);
  reconcile(r, 0, 0);
  r.target = check_target(10, 100, r.sender, true);
  CHECK(result_from_json(to_json(r)).target->ceiling);
  auto old = to_json(r);
  old["target"].erase("ceiling");
  CHECK_FALSE(result_from_json(old).target->ceiling);
}

TEST_CASE("result: --omit's whole-run counts read back - absent without it", "[result]") {
  test_result r;
  r.kind = test_kind::udp_stream;
  r.ok = true;
  CHECK_FALSE(to_json(r).contains("omit"));
  r.omit = omit_figures{2, 100, 140000, 99, 138600};
  auto back = result_from_json(to_json(r));
  REQUIRE(back.omit);
  CHECK(back.omit->seconds == 2);
  CHECK(back.omit->sent_packets == 100);
  CHECK(back.omit->received_bytes == 138600);
}

TEST_CASE("the target is in the JSON of paced tests only - strictly parsed", "[result][target]") {
  auto r = udp(1000, 1000);
  r.sender.seconds = r.receiver.seconds = 1;
  compute_rates(r.sender);
  reconcile(r, 0, 1000);
  CHECK_FALSE(to_json(r).contains("target"));
  CHECK_FALSE(result_from_json(to_json(r)).target);  // also how results from before targets read

  r.target = check_target(1010, 1, r.sender);
  auto back = result_from_json(to_json(r));
  REQUIRE(back.target);
  CHECK(back.target->requested_pps == 1010);
  CHECK(back.target->achieved_pps == 1000);
  CHECK(back.target->error_percent == Approx(r.target->error_percent));
  CHECK(back.target->met == r.target->met);

  auto j = to_json(r);
  j["target"]["spare"] = 1;
  CHECK_THROWS_WITH(result_from_json(j), Catch::Contains("target: field 'spare' is not a known field"));
  j = to_json(r);
  j["target"].erase("met");
  CHECK_THROWS_WITH(result_from_json(j), Catch::Contains("target: field 'met' is missing"));
  j["target"] = nullptr;
  CHECK_THROWS_WITH(result_from_json(j), Catch::Contains("target must be an object"));
}
