// stream_set::counts is the one place both programs turn their streams into a side's counts: these pin
// the rules both depend on. No threads, no clocks: the counters are set by hand.
#include "core/data/streams.hpp"

#include <catch2/catch.hpp>

using namespace nb;

TEST_CASE("stream_set: a sending side sums its streams, counts TCP messages from all bytes, keeps the first error") {
  stream_set streams(2, true, test_kind::tcp_stream, 1000);
  // Neither stream wrote two whole messages, together they wrote three.
  streams[0].sent.bytes.add(1500);
  streams[1].sent.bytes.add(1500);
  streams[0].sent.errors.add(2);
  streams[0].outcome = stream_outcome{200, 5, "send", {}, ""};
  streams[1].outcome = stream_outcome{100, 7, "send", {}, "send: Broken pipe"};
  std::uint64_t packets = 0, bytes = 0;
  streams.totals(packets, bytes);
  CHECK(packets == 3);
  CHECK(bytes == 3000);
  const side_counts c = streams.counts();
  CHECK(c.packets == 3);
  CHECK(c.bytes == 3000);
  CHECK(c.errors == 2);
  CHECK(c.start_wall_ns == 100);  // the earliest stream's start
  CHECK(c.elapsed_ns == 7);       // the longest stream's time
  CHECK(c.batching == "send");
  CHECK(c.error == "send: Broken pipe");
}

TEST_CASE("stream_set: MSG_ZEROCOPY sends of all streams are summed into the batching, with what the kernel did") {
  stream_set streams(2, true, test_kind::tcp_stream, 1000);
  streams[0].outcome = stream_outcome{100, 5, "send", {10, 10, 0}, ""};
  streams[1].outcome = stream_outcome{100, 5, "send", {6, 6, 0}, ""};
  CHECK(streams.counts().batching == "send, zerocopy");
  // Loopback: the kernel copies every one; a completion still missing at the end is said too.
  streams[0].outcome.zerocopy = {10, 10, 10};
  streams[1].outcome.zerocopy = {6, 5, 5};
  CHECK(streams.counts().batching ==
        "send, zerocopy asked, the kernel copied 15 of 15 sends (1 of 16 unconfirmed at the end)");
  // None confirmed (a peer that stopped acknowledging): not claimed as zero-copy.
  streams[0].outcome.zerocopy = {10, 0, 0};
  streams[1].outcome.zerocopy = {6, 0, 0};
  CHECK(streams.counts().batching == "send, zerocopy asked, none of 16 sends confirmed by the end");
  stream_set plain(1, true, test_kind::tcp_stream, 1000);
  plain[0].outcome.batching = "send";
  CHECK(plain.counts().batching == "send");
}

TEST_CASE("stream_set: a receiving side counts its own counters, or what received_of says") {
  stream_set streams(2, false, test_kind::udp_stream, 100);
  streams[0].received.on_receive(nullptr, 100, 0, 0, 50);
  streams[1].received.on_receive(nullptr, 100, 0, 0, 40);
  streams[1].outcome.batching = "recvmmsg";
  const side_counts own = streams.counts();
  CHECK(own.packets == 2);
  CHECK(own.bytes == 200);
  CHECK(own.start_wall_ns == 40);  // first arrival of any stream
  CHECK(own.end_wall_ns == 50);
  CHECK(own.batching == "recvmmsg");
  CHECK(own.error.empty());

  // netserve's forward UDP: the port's lanes count, not the streams.
  const side_counts lanes = streams.counts([](std::size_t s) {
    flow_totals t;
    t.packets = 10 * (s + 1);
    t.bytes = 1000 * (s + 1);
    return t;
  });
  CHECK(lanes.packets == 30);
  CHECK(lanes.bytes == 3000);
  CHECK_FALSE(streams.all_done());  // no thread ever ran
}
