// netserve's UDP_RR answers from a port's lanes: never outside the test's window, at most one per request
// (a repeat, or netserve's own answer reflected back, gets none), none to a datagram of another size, none
// to netserve itself; and every lane sends with don't-fragment set.
#include "core/base/clock.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/flow.hpp"
#include "netserve/server/served_test.hpp"
#include "netserve/server/udp_port.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <array>
#include <fstream>
#include <system_error>
#include <vector>

using namespace nb;

namespace {

// One plain lane on 127.0.0.1, as netserve binds a port pinned to one CPU.
serve::udp_port one_lane() {
  endpoint local = endpoint::local_of(bind_udp(endpoint::from_numeric("127.0.0.1", 0)).get());
  return serve::udp_port(serve::bind_lanes(local, {-1}, 1 << 20), true);
}

std::shared_ptr<serve::udp_flows> rr_flows(const serve::udp_port& port, const endpoint& source, std::size_t request,
                                           std::size_t response, bool itself = false) {
  auto f = std::make_shared<serve::udp_flows>(std::vector<endpoint>{source}, port.lanes());
  f->answer(request, response, endpoint::from_numeric("127.0.0.1", 0), {itself});
  return f;
}

void open_window(serve::udp_flows& f) { f.answer_between(wall_ns() - 1'000'000'000, wall_ns() + 10'000'000'000); }

// A request of `size` bytes carrying number `n` (and a send time) as netload writes it.
std::vector<unsigned char> request(std::size_t size, std::uint64_t n) {
  std::vector<unsigned char> p(size, 0);
  if (size >= payload_header_size) write_payload_header(p.data(), n, wall_ns());
  else if (size >= 8) {
    const std::uint64_t le = htole64(n);
    std::memcpy(p.data(), &le, 8);
  }
  return p;
}

// The answers that come within `wait_ms`.
std::size_t answers_within(int fd, int wait_ms) {
  std::size_t n = 0;
  std::array<unsigned char, 2048> buf;
  const std::int64_t until = mono_ns() + std::int64_t{wait_ms} * 1'000'000;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const auto left = static_cast<int>((until - mono_ns()) / 1'000'000);
    if (left <= 0 || ::poll(&p, 1, left) <= 0) return n;
    while (::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT) > 0) ++n;
  }
}

serve::answer_totals settled(const serve::udp_flows& f, std::uint64_t datagrams) {
  for (int i = 0; i < 200 && totals_of(f, 0).packets < datagrams; ++i) ::usleep(5'000);
  ::usleep(50'000);  // the lane answers right after it counts
  return serve::answers_of(f);
}

}  // namespace

TEST_CASE("netserve's lanes send with don't-fragment set", "[answers]") {
  for (const char* address : {"127.0.0.1", "::"}) {
    INFO(address);
    endpoint local;
    try {
      local = endpoint::local_of(bind_udp(endpoint::from_numeric(address, 0)).get());
    } catch (const std::system_error& e) {
      WARN("skipped " << address << ": " << e.what());  // a host without IPv6
      continue;
    }
    for (const serve::udp_lane& lane : serve::bind_lanes(local, {-1}, 1 << 20)) {
      int v = -1;
      socklen_t len = sizeof v;
      REQUIRE(::getsockopt(lane.fd.get(), IPPROTO_IP, IP_MTU_DISCOVER, &v, &len) == 0);
      CHECK(v == IP_PMTUDISC_DO);  // an IPv6 wildcard lane answers IPv4 clients too
      if (local.family() == AF_INET6) {
        REQUIRE(::getsockopt(lane.fd.get(), IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v, &len) == 0);
        CHECK(v == IPV6_PMTUDISC_DO);
      }
    }
  }
}

TEST_CASE("UDP_RR answers: only within the window, once per number, only requests of the test's size", "[answers]") {
  serve::udp_port port = one_lane();
  fd_handle client = connect_udp(endpoint::local_of(port.fd()), endpoint::from_numeric("127.0.0.1", 0));
  auto f = rr_flows(port, endpoint::local_of(client.get()), 16, 16);
  port.attach(f);
  auto send = [&](const std::vector<unsigned char>& p) { REQUIRE(::send(client.get(), p.data(), p.size(), 0) > 0); };

  for (std::uint64_t n = 0; n < 5; ++n) send(request(16, n));  // registered, not started: no window yet
  CHECK(answers_within(client.get(), 200) == 0);
  open_window(*f);
  send(request(16, 5));
  CHECK(answers_within(client.get(), 500) == 1);
  send(request(16, 5));  // the same number again
  send(request(20, 6));  // another size
  send(request(16, 4));  // an old number never answered (it came before the window): answered now
  CHECK(answers_within(client.get(), 300) == 1);
  f->answer_between(wall_ns() - 2'000'000'000, wall_ns() - 1'000'000'000);  // the window has passed
  send(request(16, 7));
  CHECK(answers_within(client.get(), 200) == 0);
  const serve::answer_totals a = settled(*f, 10);
  port.detach(f);
  CHECK(a.packets == 2);
  CHECK(a.unanswered == 8);               // 5 before, the repeat, the wrong size, 1 after
  CHECK(totals_of(*f, 0).packets == 10);  // every request counted as received all the same
}

TEST_CASE("UDP_RR answers: an answer reflected back to netserve is not answered - no loop", "[answers]") {
  serve::udp_port port = one_lane();
  const endpoint self = endpoint::local_of(port.fd());
  const auto kick = [&](std::size_t size) {
    const auto p = request(size, 42);
    REQUIRE(::sendto(port.fd(), p.data(), p.size(), 0, self.data(), self.size()) == static_cast<ssize_t>(p.size()));
  };
  SECTION("numbered requests: the reflection repeats its number") {
    // A flow from the port to itself: every answer comes back to the lane as a request. The only thing
    // that stops the loop here is that the number was answered already.
    auto f = rr_flows(port, self, 8, 8);
    open_window(*f);
    port.attach(f);
    kick(8);
    const serve::answer_totals a = settled(*f, 2);
    port.detach(f);
    CHECK(a.packets == 1);
    CHECK(a.unanswered == 1);
    CHECK(totals_of(*f, 0).packets == 2);  // the kick and its answer, then nothing
  }
  SECTION("1-byte requests carry no number: a source that is netserve itself is never answered") {
    auto f = rr_flows(port, self, 1, 1, true);
    open_window(*f);
    port.attach(f);
    kick(1);
    const serve::answer_totals a = settled(*f, 1);
    ::usleep(200'000);
    port.detach(f);
    CHECK(a.packets == 0);
    CHECK(totals_of(*f, 0).packets == 1);
  }
  SECTION("1-byte requests from another netserve's port: its answers carry the mark and get none") {
    // Two netserves registered at each other's ports (the source is not this one's own socket): a 1-byte
    // request is answered once, with the mark; the other side's answer back, marked too, is not.
    const auto other = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
    const endpoint from = endpoint::local_of(other.get());
    auto f = rr_flows(port, from, 1, 1);
    open_window(*f);
    port.attach(f);
    const unsigned char zero = 0, mark = rr_answer_mark;
    REQUIRE(::sendto(other.get(), &zero, 1, 0, self.data(), self.size()) == 1);
    REQUIRE(answers_within(other.get(), 300) == 1);
    REQUIRE(::sendto(other.get(), &mark, 1, 0, self.data(), self.size()) == 1);
    CHECK(answers_within(other.get(), 300) == 0);
    const serve::answer_totals a = settled(*f, 2);
    port.detach(f);
    CHECK(a.packets == 1);
    CHECK(a.unanswered == 1);
  }
}

TEST_CASE("this host's own addresses are local, others are not", "[answers]") {
  CHECK(is_local_address(endpoint::from_numeric("127.0.0.1", 9)));
  CHECK(is_local_address(endpoint::from_numeric("127.0.0.2", 9)));
  CHECK(is_local_address(endpoint::from_numeric("::ffff:127.0.0.1", 9)));
  std::ifstream nonlocal("/proc/sys/net/ipv4/ip_nonlocal_bind");
  int any = 0;
  if (nonlocal >> any && any) {
    WARN("skipped: net.ipv4.ip_nonlocal_bind makes every address bindable");
    return;
  }
  CHECK_FALSE(is_local_address(endpoint::from_numeric("192.0.2.1", 9)));  // TEST-NET-1: bound, never sent to
}

TEST_CASE("a reverse stream to netserve's own port does not start, even if the address became local after registration",
          "[answers]") {
  const endpoint local = endpoint::local_of(bind_udp(endpoint::from_numeric("127.0.0.1", 0)).get());
  auto port = std::make_shared<serve::udp_port>(serve::bind_lanes(local, {-1}, 1 << 20), true);
  test_request r;
  r.kind = test_kind::udp_stream;
  r.reverse = true;
  r.message_size = 1;
  r.duration_s = 0.2;
  r.pps = 100;
  r.data_ports = {local.port()};
  auto own = std::make_shared<serve::own_sockets>();
  own->ports.add(local.port());
  serve::served_test t(1, "cookie", r, endpoint::from_numeric("127.0.0.1", 40000), local, port, own);
  CHECK_THROWS_WITH(t.start(wall_ns()), Catch::Contains("is one of netserve's own sockets"));
  CHECK(t.finish().packets == 0);
}
