// Request/response: the client's transaction loop against servers that answer, drop and reorder, the
// TCP server loop, and the reconciliation of both sides' counts.
#include "core/base/clock.hpp"
#include "core/data/rr.hpp"
#include "core/data/streams.hpp"
#include "core/result/result.hpp"
#include "core/sys/socket.hpp"

#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

namespace {

struct client {
  nb::send_counters requests;
  nb::recv_counters answers;
  nb::rr_counters rr;
  nb::latency_histogram latency;
  nb::stream_outcome out;
  nb::rr_client_state state() { return {requests, answers, rr, latency}; }
};

nb::stream_plan plan_for(int fd, std::size_t request, std::size_t response, std::uint32_t burst, double pps,
                         std::int64_t duration_ns) {
  nb::stream_plan p;
  p.fd = fd;
  p.message_size = request;
  p.response_size = response;
  p.burst = burst;
  p.pps = pps;
  p.start_wall_ns = nb::wall_ns();
  p.duration_ns = duration_ns;
  return p;
}

// A pair of connected UDP sockets on loopback: the client's and the server's.
std::pair<nb::fd_handle, nb::fd_handle> udp_pair() {
  nb::fd_handle server = nb::make_socket(AF_INET, SOCK_DGRAM), client = nb::make_socket(AF_INET, SOCK_DGRAM);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(server.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::getsockname(server.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
  REQUIRE(::connect(client.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::getsockname(client.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
  REQUIRE(::connect(server.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return {std::move(client), std::move(server)};
}

// Answers UDP requests until `stop`, leaving unanswered every request whose number % drop_every == 1
// (0: none), and answering each pair of requests in reverse order when `swap`.
void udp_server(int fd, std::size_t response, std::uint64_t drop_every, bool swap, const std::atomic<bool>& stop,
                std::uint64_t& answered, std::uint64_t& dropped) {
  std::vector<unsigned char> in(2048), held(2048), out(response);
  bool holding = false;
  while (!stop) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const ssize_t n = ::recv(fd, in.data(), in.size(), 0);
    if (n < 8) continue;
    std::uint64_t seq;
    std::memcpy(&seq, in.data(), 8);
    if (drop_every && le64toh(seq) % drop_every == 1) {
      ++dropped;
      continue;
    }
    if (swap && !holding) {
      held = in;
      holding = true;
      continue;
    }
    nb::fill_udp_answer(in.data(), static_cast<std::size_t>(n), out.data(), response);
    ::send(fd, out.data(), response, 0);
    ++answered;
    if (holding) {
      nb::fill_udp_answer(held.data(), static_cast<std::size_t>(n), out.data(), response);
      ::send(fd, out.data(), response, 0);
      ++answered;
      holding = false;
    }
  }
}

}  // namespace

TEST_CASE("UDP_RR client: every request answered in time or given up, lost ones counted, each answer timed once",
          "[rr]") {
  auto [c, s] = udp_pair();
  std::atomic<bool> stop{false};
  std::uint64_t answered = 0, dropped = 0;
  std::thread server([&, fd = s.get()] { udp_server(fd, 32, 40, false, stop, answered, dropped); });
  client cl;
  // Unpaced, four in flight: each unanswered request shuts the window for its timeout (200 ms).
  nb::run_udp_rr_client({}, plan_for(c.get(), 64, 32, 3, 0, 500'000'000), cl.state(), cl.out);
  stop = true;
  server.join();
  CHECK(cl.out.error.empty());
  const std::uint64_t sent = cl.requests.packets.get();
  CHECK(sent > 20);
  CHECK(dropped > 0);
  CHECK(cl.rr.timeouts.get() == dropped);       // given up: exactly the ones the server left unanswered
  CHECK(cl.answers.packets.get() == answered);  // the rest came back, none late on loopback
  CHECK(cl.answers.packets.get() + cl.rr.timeouts.get() == sent);
  CHECK(cl.latency.count() == cl.answers.packets.get());
  CHECK(cl.rr.unmatched.get() == 0);
}

TEST_CASE("UDP_RR client: an answer after its transaction was given up is late, also with nothing else in flight",
          "[rr]") {
  auto [c, s] = udp_pair();
  std::atomic<bool> stop{false};
  std::uint64_t answered = 0;
  // Answers every request at once except number 3, whose answer comes 600 ms later: past the client's
  // 200-ms timeout, when the window (one in flight, 20 per second) is usually empty.
  std::thread server([&, fd = s.get()] {
    std::vector<unsigned char> in(64), out(16), held(16);
    std::int64_t release = 0;
    while (!stop) {
      if (release && nb::mono_ns() >= release) {
        ::send(fd, held.data(), held.size(), 0);
        release = 0;
      }
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 5) <= 0) continue;
      const ssize_t n = ::recv(fd, in.data(), in.size(), 0);
      if (n < 8) continue;
      std::uint64_t seq;
      std::memcpy(&seq, in.data(), 8);
      nb::fill_udp_answer(in.data(), static_cast<std::size_t>(n), (le64toh(seq) == 3 ? held : out).data(), 16);
      if (le64toh(seq) == 3) release = nb::mono_ns() + 600'000'000;
      else ::send(fd, out.data(), out.size(), 0), ++answered;
    }
  });
  client cl;
  nb::run_udp_rr_client({}, plan_for(c.get(), 16, 16, 0, 20, 1'200'000'000), cl.state(), cl.out);
  stop = true;
  server.join();
  CHECK(cl.rr.timeouts.get() == 1);
  CHECK(cl.rr.late.get() == 1);
  CHECK(cl.rr.unmatched.get() == 0);
  CHECK(cl.answers.packets.get() == answered);
  CHECK(cl.answers.packets.get() + cl.rr.timeouts.get() == cl.requests.packets.get());
}

TEST_CASE("UDP_RR client: answers out of order are matched by their number", "[rr]") {
  auto [c, s] = udp_pair();
  std::atomic<bool> stop{false};
  std::uint64_t answered = 0, dropped = 0;
  std::thread server([&, fd = s.get()] { udp_server(fd, 16, 0, true, stop, answered, dropped); });
  client cl;
  // Two in flight: the server holds the first of each pair and answers it after the second.
  nb::run_udp_rr_client({}, plan_for(c.get(), 16, 16, 1, 0, 300'000'000), cl.state(), cl.out);
  stop = true;
  server.join();
  CHECK(cl.out.error.empty());
  CHECK(cl.answers.packets.get() == answered);
  CHECK(cl.rr.unmatched.get() == 0);
  CHECK(cl.answers.packets.get() + cl.rr.timeouts.get() == cl.requests.packets.get());
  CHECK(cl.latency.count() == answered);
}

TEST_CASE("TCP_RR: client and server loops agree on every request and answer, with a burst", "[rr]") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  nb::fd_handle a(sv[0]), b(sv[1]);
  nb::recv_counters server_requests;
  nb::send_counters server_answers;
  nb::stream_outcome server_out;
  const nb::stream_plan sp = plan_for(b.get(), 300, 5000, 0, 0, 0);
  std::jthread server(
      [&](std::stop_token st) { nb::run_tcp_rr_server(st, sp, server_requests, server_answers, server_out); });
  client cl;
  nb::run_tcp_rr_client({}, plan_for(a.get(), 300, 5000, 7, 0, 300'000'000), cl.state(), cl.out);
  server.join();  // it ends at the client's EOF, every answer written
  CHECK(cl.out.error.empty());
  CHECK(server_out.error.empty());
  const std::uint64_t sent = cl.requests.packets.get();
  CHECK(sent > 100);
  CHECK(server_requests.packets.get() == sent);
  CHECK(server_requests.bytes.get() == sent * 300);
  CHECK(server_answers.packets.get() == sent);
  CHECK(cl.answers.packets.get() == sent);
  CHECK(cl.answers.bytes.get() == sent * 5000);
  CHECK(cl.latency.count() == sent);
  CHECK(cl.rr.timeouts.get() == 0);
}

TEST_CASE("UDP_RR timeout: the ceiling until a round trip is known, four times the longest within the bounds", "[rr]") {
  CHECK(nb::rr_timeout_ns(0) == nb::rr_timeout_ceiling_ns);
  CHECK(nb::rr_timeout_ns(1000) == nb::rr_timeout_floor_ns);
  CHECK(nb::rr_timeout_ns(100'000'000) == 400'000'000);
  CHECK(nb::rr_timeout_ns(10'000'000'000ULL) == nb::rr_timeout_ceiling_ns);
}

namespace {

nb::test_result rr_result(std::uint64_t requests, std::uint64_t received) {
  nb::test_result r;
  r.kind = nb::test_kind::udp_rr;
  r.sender.packets = requests;
  r.receiver.packets = received;
  nb::reconcile(r, 0, received);
  r.rr.emplace();
  return r;
}

}  // namespace

TEST_CASE("reconcile_rr: requests and answers lost, late and refused add up to what was given up", "[rr]") {
  nb::side_counts client, server;
  client.packets = 100;   // requests sent
  client.responses = 90;  // answered in time
  client.timeouts = 10;
  client.late_responses = 2;
  server.packets = 96;    // 4 requests lost
  server.responses = 95;  // 1 answer refused by the server's kernel
  server.errors = 1;
  // 95 sent = 90 + 2 late + 3 lost; given up 10 = 4 + 3 + 2 + 1
  SECTION("they reconcile") {
    nb::test_result r = rr_result(100, 96);
    nb::reconcile_rr(r, client, server);
    CHECK(r.loss.reconciles);
    CHECK(r.loss.packets == 4);
    CHECK(r.rr->responses_lost == 3);
    CHECK(r.rr->transactions == 90);
  }
  SECTION("a given-up transaction nobody lost does not") {
    client.timeouts = 11;
    client.packets = 101;
    server.packets = 97;  // 4 requests lost: 11 given up against 4 + 3 + 2 + 1
    nb::test_result r = rr_result(101, 97);
    nb::reconcile_rr(r, client, server);
    CHECK_FALSE(r.loss.reconciles);
    CHECK_THAT(r.loss.note, Catch::Contains("given up"));
  }
  SECTION("more answers than the server sent do not") {
    client.responses = 94;
    client.timeouts = 6;
    nb::test_result r = rr_result(100, 96);
    nb::reconcile_rr(r, client, server);
    CHECK_FALSE(r.loss.reconciles);
    CHECK_THAT(r.loss.note, Catch::Contains("more answers"));
  }
}

TEST_CASE("UDP_RR server: each request number answered once - repeats, reflections and numbers too old get none",
          "[rr]") {
  nb::rr_request_numbers seen;
  CHECK(seen.first_time(0));
  CHECK_FALSE(seen.first_time(0));  // the same request again, or our answer to it reflected back
  CHECK(seen.first_time(2));        // 1 lost or late
  CHECK(seen.first_time(1));        // late, still within the window: answered once
  CHECK_FALSE(seen.first_time(1));
  constexpr std::uint64_t span = nb::rr_request_numbers::span;
  CHECK(seen.first_time(span + 1));  // a jump: every slot between is fresh
  CHECK(seen.first_time(span - 1));  // its slot held number 2*span - 1's place, never 'span - 1' itself
  CHECK_FALSE(seen.first_time(1));   // a span below the highest: too old to tell, not answered
  CHECK(seen.first_time(3 * span));  // a jump past the whole window clears it
  CHECK(seen.first_time(2 * span + 1));
  CHECK_FALSE(seen.first_time(2 * span + 1));
  CHECK(seen.first_time(UINT64_MAX));  // the end of the numbers: no wrap to 0
  CHECK_FALSE(seen.first_time(UINT64_MAX));
  CHECK_FALSE(seen.first_time(0));
}

TEST_CASE("UDP_RR: which requests carry their number, as the client writes them", "[rr]") {
  CHECK_FALSE(nb::rr_request_numbered(1, 1));
  CHECK_FALSE(nb::rr_request_numbered(8, 7));  // no room in the answer: the client leaves it out
  CHECK(nb::rr_request_numbered(8, 8));
  CHECK(nb::rr_request_numbered(16, 1));  // the payload header carries it anyway
  CHECK_FALSE(nb::rr_request_numbered(7, 64));
}
