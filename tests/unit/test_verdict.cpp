// Every verdict, each from a constructed case: the counts of a test and what both hosts counted.
#include "core/policy/verdict.hpp"

#include <catch2/catch.hpp>

using namespace nb;

namespace {

// A host whose CPU 1 is `busy` % busy (`softirq` of it in softirq) and CPU 0 `other` % busy.
host_delta host(double busy, double softirq, double process_pct, double other = 10) {
  host_delta h;
  h.window_s = 10;
  h.cpus = 2;
  cpu_share c0;
  c0.cpu = 0;
  c0.user_pct = other;
  c0.idle_pct = 100 - other;
  cpu_share c1;
  c1.cpu = 1;
  c1.softirq_pct = softirq;
  c1.user_pct = busy - softirq;
  c1.idle_pct = 100 - busy;
  h.per_cpu = {c0, c1};
  h.all.user_pct = (c0.user_pct + c1.user_pct) / 2;
  h.all.softirq_pct = softirq / 2;
  h.all.idle_pct = (c0.idle_pct + c1.idle_pct) / 2;
  h.process_cpu_pct = process_pct;
  h.process_cpu_s = process_pct / 100 * h.window_s;
  return h;
}

test_result udp(std::uint64_t sent, std::uint64_t received, std::uint64_t drops) {
  test_result r;
  r.ok = true;
  r.sender.packets = sent;
  r.receiver.packets = received;
  reconcile(r, drops, received);
  r.hosts.sender = host(50, 5, 50);
  r.hosts.receiver = host(40, 10, 30);
  return r;
}

const pacing_outcome unpaced{};

}  // namespace

TEST_CASE("verdict: socket drops on a receiver CPU saturated by softirq are receive livelock", "[verdict]") {
  auto r = udp(1000, 600, 400);
  r.hosts.receiver = host(99, 93, 20);
  auto v = judge_limit(r, unpaced);
  CHECK(v.limit == "receiver-cpu");
  CHECK_THAT(v.text, Catch::Contains("softirq 93 %: receive livelock"));
  CHECK_THAT(v.text, Catch::Contains("dropped 400 of 400 lost"));
}

TEST_CASE("verdict: socket drops on a receiving host with no idle CPU: the reader starved", "[verdict]") {
  auto r = udp(1000, 600, 400);
  r.hosts.receiver = host(99, 0, 26, 97);
  auto v = judge_limit(r, unpaced);
  CHECK(v.limit == "receiver-cpu");
  CHECK_THAT(v.text, Catch::Contains("the reader starved"));
}

TEST_CASE("verdict: socket drops with CPU to spare are a socket overflow", "[verdict]") {
  auto r = udp(1000, 600, 300);         // 300 of the 400 lost in the socket: the larger part
  r.hosts.receiver = host(99, 20, 95);  // saturated, but not by softirq: the reader itself
  auto v = judge_limit(r, unpaced);
  CHECK(v.limit == "receiver-socket");
  CHECK_THAT(v.text, Catch::Contains("buffer too small or the reader too slow"));
  r.hosts.receiver.reset();
  CHECK(judge_limit(r, unpaced).limit == "receiver-socket");
  CHECK_THAT(judge_limit(r, unpaced).text, Catch::Contains("receiver host not sampled"));
}

TEST_CASE("verdict: loss the receiving host counted below the socket", "[verdict]") {
  auto r = udp(1000, 600, 10);
  r.hosts.receiver->softnet_dropped = 350;
  auto v = judge_limit(r, unpaced);
  CHECK(v.limit == "before-socket");
  CHECK_THAT(v.text, Catch::Contains("350 backlog drops"));

  r = udp(1000, 600, 0);
  r.hosts.receiver->interfaces.push_back({"eth0", 100, 390, 0, 0});
  CHECK(judge_limit(r, unpaced).limit == "before-socket");
  r = udp(1000, 600, 0);
  r.hosts.receiver->udp.in_errors = r.hosts.receiver->udp.rcvbuf_errors = 400;  // another socket's overflow
  CHECK(judge_limit(r, unpaced).limit == "path");
  r.hosts.receiver->udp.in_errors = 800;  // errors beyond the buffer overflows: checksum, memory
  CHECK(judge_limit(r, unpaced).limit == "before-socket");
  r = udp(1000, 600, 0);
  r.hosts.receiver->softnet_time_squeeze = 12;
  CHECK(judge_limit(r, unpaced).limit == "path");  // a squeeze drops nothing: no host verdict on it alone
  CHECK_THAT(judge_limit(r, unpaced).text, Catch::Contains("ran out of budget 12 times"));
}

// Issue 39: one instance of the lab's device-as-server -m 1 run, whose losses the circuit's packet-rate
// limit made. The device's host counted no drop below the socket, only softirq budget squeezes; the
// verdict was "before-socket" beside the circuit's count of every loss.
TEST_CASE("verdict: softirq squeezes with no drop counted below the socket are the path's loss", "[verdict]") {
  auto r = udp(2'500'000, 223'141, 0);
  r.hosts.receiver->softnet_time_squeeze = 4821;
  const auto v = judge_limit(r, unpaced);
  CHECK(v.limit == "path");
  CHECK_THAT(v.text, Catch::StartsWith("path loss: 2276859 of 2500000 (91.07 %) lost between the sockets"));
  CHECK_THAT(v.text, Catch::Contains("the receiving host counted no drop below the socket (its softirq ran out of "
                                     "budget 4821 times, which drops nothing by itself)"));
  CHECK_THAT(v.text, !Catch::Contains("before the socket (backlog"));
  r.verdict = v;
  r.sender.seconds = r.receiver.seconds = 1;
  CHECK_FALSE(figure_meaning(r));  // the received figure is what crossed the path, not an overdriven receiver's
}

TEST_CASE("verdict: a few drops below the socket, against a far larger loss, are no host verdict", "[verdict]") {
  auto r = udp(1000, 600, 0);  // 400 lost past the socket
  r.hosts.receiver->softnet_dropped = 150;
  r.hosts.receiver->interfaces.push_back({"eth0", 100, 40, 0, 0});
  auto v = judge_limit(r, unpaced);
  CHECK(v.limit == "path");
  CHECK_THAT(v.text, Catch::Contains("the receiving host counted 150 backlog drops, 40 interface receive drops, 0 UDP "
                                     "errors, too few to be the larger part"));
  r.hosts.receiver->softnet_dropped = 160;  // 200 of 400: the larger part, as for the socket's drops
  CHECK(judge_limit(r, unpaced).limit == "before-socket");
}

TEST_CASE("verdict: loss nobody counted is the path's", "[verdict]") {
  auto r = udp(1000, 600, 0);
  auto v = judge_limit(r, unpaced);
  CHECK(v.limit == "path");
  CHECK_THAT(v.text, Catch::Contains("path loss: 400 of 1000 (40.00 %)"));
  r.hosts.sender->interfaces.push_back({"eth0", 0, 0, 600, 25});
  CHECK_THAT(judge_limit(r, unpaced).text, Catch::Contains("dropped 25 on transmit"));
}

TEST_CASE("verdict: no loss and a sender at its maximum is the sender's CPU", "[verdict]") {
  auto r = udp(1000, 1000, 0);
  r.hosts.sender = host(99, 1, 97);
  auto v = judge_limit(r, unpaced);
  CHECK(v.limit == "sender-cpu");
  CHECK_THAT(v.text, Catch::Contains("unpaced: the figure is what this sender can do"));
  CHECK_THAT(v.text, Catch::Contains("netload 97 % of a core"));

  r.hosts.sender = host(100, 20, 76);  // its CPU full, a fifth of it softirq done for it (loopback)
  CHECK(judge_limit(r, unpaced).limit == "sender-cpu");
  CHECK_THAT(judge_limit(r, unpaced).text, Catch::Contains("plus softirq/irq 20 %"));

  r.hosts.sender = host(99, 5, 60, 99);  // other load took the CPUs
  CHECK_THAT(judge_limit(r, unpaced).text, Catch::Contains("other load"));

  r.hosts.sender = host(99, 5, 60);  // two streams need two cores: one busy CPU is not the limit
  r.streams = 2;
  CHECK(judge_limit(r, unpaced).limit == "none");

  r.streams = 1;
  r.reverse = true;  // netserve sends
  r.hosts.sender = host(99, 1, 97);
  CHECK_THAT(judge_limit(r, unpaced).text, Catch::Contains("netserve 97 %"));
}

TEST_CASE("verdict: a paced sender that missed its target", "[verdict]") {
  auto r = udp(1000, 1000, 0);
  r.hosts.sender = host(99, 1, 98);
  auto v = judge_limit(r, {true, true, -3.25});
  CHECK(v.limit == "sender-cpu");
  CHECK_THAT(v.text, Catch::Contains("missed its paced target by 3.25 %"));

  r.hosts.sender = host(30, 1, 20);  // CPU to spare: held back by the link out
  v = judge_limit(r, {true, true, -3.25});
  CHECK(v.limit == "path");
  CHECK_THAT(v.text, Catch::Contains("link out"));

  r.kind = test_kind::tcp_stream;
  r.hosts.receiver = host(98, 30, 90);
  CHECK(judge_limit(r, {true, true, -3.25}).limit == "receiver-cpu");
  CHECK(judge_limit(r, unpaced).limit == "receiver-cpu");  // TCP flow control
}

TEST_CASE("verdict: the pacing comes from the result's target", "[verdict]") {
  auto r = udp(1000, 1000, 0);
  r.hosts.sender = host(99, 1, 98);
  target_figures t;
  t.error_percent = -4.5;
  t.met = false;
  r.target = t;
  CHECK(judge_limit(r).limit == "sender-cpu");
  CHECK_THAT(judge_limit(r).text, Catch::Contains("missed its paced target by 4.50 %"));
  r.target->error_percent = 2.5;  // above the target: not a limit of the sender
  CHECK(judge_limit(r).limit == "none");
  r.target->met = true;
  r.target->error_percent = -0.5;
  CHECK(judge_limit(r).text == "no host limit seen: the paced target was carried without loss");
  r.target.reset();  // unpaced: the same busy sender is at its maximum
  CHECK(judge_limit(r).limit == "sender-cpu");
  // TCP under its ceiling was not held by the pacing: judged as unpaced, never "carried".
  r.kind = test_kind::tcp_stream;
  t.ceiling = true;
  t.met = true;
  t.error_percent = -37;
  r.target = t;
  CHECK(judge_limit(r).limit == "sender-cpu");
  CHECK_THAT(judge_limit(r).text, Catch::Contains("unpaced"));
  // Exceeded in --omit's left-out seconds, the window under it: a pacing fault, never a sender that fell short.
  r.target->met = false;
  r.target->error_percent = -0.5;
  CHECK(judge_limit(r).limit == "none");
  CHECK_THAT(judge_limit(r).text, !Catch::Contains("missed"));
  r.target->error_percent = -37;
  CHECK_THAT(judge_limit(r).text, !Catch::Contains("unpaced"));
}

TEST_CASE("verdict: none when the hosts had room - and none for a test without figures", "[verdict]") {
  auto r = udp(1000, 1000, 0);
  CHECK(judge_limit(r, unpaced).limit == "none");
  CHECK(judge_limit(r, unpaced).text == "no host limit seen: the figure is the path's");
  CHECK(judge_limit(r, {true, false, 0.01}).text == "no host limit seen: the paced target was carried without loss");
  r.hosts.receiver.reset();
  CHECK_THAT(judge_limit(r, unpaced).text, Catch::Contains("receiver host not sampled"));
  r.ok = false;
  CHECK(judge_limit(r, unpaced).text == "no verdict: the test did not complete");
  r = udp(100, 101, 0);
  CHECK(judge_limit(r, unpaced).text == "no verdict: the counts do not reconcile");
}

TEST_CASE("hosts and verdict survive the result's JSON - results without them still read", "[verdict][result]") {
  auto r = udp(1000, 600, 400);
  r.verdict = judge_limit(r, unpaced);
  auto j = to_json(r);
  CHECK(j["hosts"]["sender"]["process"]["cpu_pct"] == 50.0);
  CHECK(j["verdict"]["limit"] == "receiver-socket");
  auto back = result_from_json(j);
  REQUIRE(back.hosts.sender);
  REQUIRE(back.hosts.receiver);
  CHECK(back.hosts.receiver->busiest()->cpu == 1);
  REQUIRE(back.verdict);
  CHECK(back.verdict->text == r.verdict->text);
  CHECK(to_json(back) == j);

  j["verdict"]["limit"] = "gremlins";
  CHECK_THROWS_WITH(result_from_json(j), Catch::Contains("'limit' names no known limit"));
  j["verdict"] = nullptr;
  j["hosts"]["receiver"] = nullptr;
  back = result_from_json(j);
  CHECK_FALSE(back.verdict);
  CHECK_FALSE(back.hosts.receiver);
  j.erase("verdict");
  j.erase("hosts");  // written before hosts existed
  CHECK_FALSE(result_from_json(j).hosts.sender);
}

TEST_CASE("verdict: without SO_MEMINFO the host's RcvbufErrors, not the unknown 0, decide", "[verdict]") {
  // The receiving kernel cannot count the socket's drops: its result says 0 and "no drop count".
  auto r = udp(1000, 150, 0);
  r.receiver.batching = "recvmmsg, no drop count";
  SECTION("the host's sockets overflowed: the socket, never the path") {
    r.hosts.receiver->udp.rcvbuf_errors = 850;
    const auto v = judge_limit(r, unpaced);
    CHECK(v.limit == "receiver-socket");
    CHECK_THAT(v.text, Catch::Contains("RcvbufErrors") && Catch::Contains("no SO_MEMINFO"));
  }
  SECTION("no host count either: the path, saying the socket's drops are unknown") {
    const auto v = judge_limit(r, unpaced);
    CHECK(v.limit == "path");
    CHECK_THAT(v.text, Catch::Contains("unknown"));
  }
}

// Issue 39: iperf3 -s's socket dropped 627 datagrams (UdpRcvbufErrors 627 in its namespace), which it
// does not report; the verdict said "path loss" and the table "627 lost on the path".
TEST_CASE("verdict: a stock server's loss is not split: no verdict on where, and why", "[verdict]") {
  for (const std::string server : {"iperf3", "netserver"}) {
    auto r = udp(10'000, 9'373, 0);
    r.receiver.batching = server + ", no drop count";
    r.hosts.receiver.reset();  // a stock server samples nothing
    r.hosts.sender.reset();
    CHECK(stock_receiver(r.receiver.batching) == server);
    const auto v = judge_limit(r, unpaced);
    CHECK(v.limit == "none");
    CHECK(v.text ==
          "no verdict: 627 of 10000 (6.27 %) lost, on the path or in the receiving socket, unknown which: "
          "the socket's own drops are unknown (" +
              server + " does not report them) and the receiving host was not sampled");
  }
  CHECK(stock_receiver("recvmmsg, no drop count").empty());
  CHECK(stock_receiver("iperf3").empty());  // the sender's figures of --reverse: no drop count at stake
  CHECK(stock_receiver("gro").empty());
}

namespace {

// An unpaced UDP_STREAM judged: 1000 sent, 600 received over 1 s, `drops` of the 400 lost in the socket.
test_result judged_udp(std::uint64_t drops) {
  auto r = udp(1000, 600, drops);
  r.sender.seconds = r.receiver.seconds = 1;
  compute_rates(r.sender);
  compute_rates(r.receiver);
  r.verdict = judge_limit(r);
  return r;
}

}  // namespace

TEST_CASE("figure meaning: for each verdict, an overdriven receiver's figure says what it is, others say nothing",
          "[verdict]") {
  const std::string search = "run netload --search pdr with the same options to find it";
  SECTION("receiver-cpu: receive livelock") {
    auto r = udp(1000, 600, 400);
    r.hosts.receiver = host(99, 93, 20);
    r.sender.seconds = r.receiver.seconds = 1;
    compute_rates(r.sender);
    compute_rates(r.receiver);
    r.verdict = judge_limit(r);
    REQUIRE(r.verdict->limit == "receiver-cpu");
    auto m = figure_meaning(r);
    REQUIRE(m);
    CHECK_THAT(
        *m, Catch::StartsWith("received 600.0 pps is what this receiver kept while overdriven (1000.0 pps sent, "
                              "40.00 % lost: its CPU could not take them all in); it is neither the sender's "
                              "speed nor the rate this receiver carries without loss, which may be lower or higher"));
    CHECK_THAT(*m, Catch::EndsWith(search));
  }
  SECTION("receiver-socket") {
    auto r = judged_udp(300);
    r.hosts.receiver = host(99, 20, 95);
    r.verdict = judge_limit(r);
    REQUIRE(r.verdict->limit == "receiver-socket");
    REQUIRE(figure_meaning(r));
    CHECK_THAT(*figure_meaning(r), Catch::Contains("40.00 % lost: its socket overflowed)"));
    CHECK_THAT(*figure_meaning(r), Catch::EndsWith(search));
  }
  SECTION("before-socket") {
    auto r = judged_udp(10);
    r.hosts.receiver->softnet_dropped = 350;
    r.verdict = judge_limit(r);
    REQUIRE(r.verdict->limit == "before-socket");
    REQUIRE(figure_meaning(r));
    CHECK_THAT(*figure_meaning(r), Catch::Contains("its kernel dropped them before the socket"));
  }
  SECTION("path, sender-cpu and none: the figure means what it says") {
    auto r = judged_udp(0);
    REQUIRE(r.verdict->limit == "path");
    CHECK_FALSE(figure_meaning(r));
    r = udp(1000, 1000, 0);
    r.hosts.sender = host(99, 1, 97);
    r.verdict = judge_limit(r);
    REQUIRE(r.verdict->limit == "sender-cpu");
    CHECK_FALSE(figure_meaning(r));
    r = udp(1000, 1000, 0);
    r.verdict = judge_limit(r);
    REQUIRE(r.verdict->limit == "none");
    CHECK_FALSE(figure_meaning(r));
  }
  SECTION("a paced test, a TCP test or a failed one: nothing, whatever the limit") {
    auto r = judged_udp(400);
    REQUIRE(figure_meaning(r));
    auto paced = r;
    paced.target = check_target(1000, 1, paced.sender);
    CHECK_FALSE(figure_meaning(paced));
    auto tcp = r;
    tcp.kind = test_kind::tcp_stream;
    CHECK_FALSE(figure_meaning(tcp));
    auto failed = r;
    failed.ok = false;
    CHECK_FALSE(figure_meaning(failed));
    auto unjudged = r;
    unjudged.verdict.reset();
    CHECK_FALSE(figure_meaning(unjudged));
  }
}
