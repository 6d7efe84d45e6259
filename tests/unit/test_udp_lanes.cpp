// netserve's receive lanes: which CPUs get one, that the kernel steers each datagram to the lane of the
// CPU that sent it over loopback, and that a flow split over lanes is still counted exactly once.
#include "core/base/clock.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/flow.hpp"
#include "netserve/server/udp_port.hpp"

#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <array>
#include <fstream>
#include <string>
#include <thread>

using namespace nb;
using nb::serve::receive_cpus;

namespace {

// A port's lanes on 127.0.0.1, as netserve binds them, on a port that was free a moment ago.
std::vector<serve::udp_lane> bind_group(const std::vector<int>& cpus) {
  endpoint local = endpoint::local_of(bind_udp(endpoint::from_numeric("127.0.0.1", 0)).get());
  return serve::bind_lanes(local, cpus, 4 << 20);  // root gets it all; others at least 2 x 212 KB
}

// Sends `count` sequenced datagrams on `fd` from a thread pinned to `cpu`; returns how many went out.
// (Catch2 assertions stay on the test's own thread.)
std::uint64_t send_from(int cpu, int fd, std::uint64_t first_seq, std::uint64_t count) {
  std::uint64_t sent = 0;
  std::thread([&] {
    if (!pin_thread_to_cpu(cpu)) return;
    std::array<unsigned char, 64> payload{};
    for (std::uint64_t i = 0; i < count; ++i) {
      write_payload_header(payload.data(), first_seq + i, wall_ns());
      if (::send(fd, payload.data(), payload.size(), 0) == static_cast<ssize_t>(payload.size())) ++sent;
    }
  }).join();
  return sent;
}

std::size_t drain(int fd) {
  std::size_t n = 0;
  std::array<unsigned char, 64> buf;
  while (::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT) > 0) ++n;
  return n;
}

// Two CPUs to send from, or none (with the reason) where lanes cannot be told apart: one CPU, or
// loopback packets moved to other CPUs by RPS.
std::vector<int> two_cpus() {
  auto cpus = allowed_cpus();
  if (cpus.size() < 2) {
    WARN("skipped: this process may run on one CPU only, lanes need two");
    return {};
  }
  std::ifstream rps("/sys/class/net/lo/queues/rx-0/rps_cpus");
  std::string mask;
  if (rps >> mask && mask.find_first_not_of("0,") != std::string::npos) {
    WARN("skipped: RPS moves loopback packets to CPUs " << mask);
    return {};
  }
  return {cpus[0], cpus[1]};
}

}  // namespace

TEST_CASE("receive lanes: one per allowed CPU - at most 8 by default - a single one unpinned", "[lanes]") {
  CHECK(receive_cpus({0, 1, 2, 3}, 0) == std::vector<int>{0, 1, 2, 3});
  CHECK(receive_cpus({2, 5}, 0) == std::vector<int>{2, 5});
  CHECK(receive_cpus({0, 1, 2, 3}, 2) == std::vector<int>{0, 1});
  CHECK(receive_cpus({0, 1, 2, 3}, 1) == std::vector<int>{-1});
  CHECK(receive_cpus({3}, 0) == std::vector<int>{-1});
  CHECK(receive_cpus({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0).size() == 8);
  CHECK(receive_cpus({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12).size() == 12);
  CHECK_THROWS_WITH(receive_cpus({0, 1}, 3), "--rx-threads 3: netserve may run on 2 CPUs");
}

TEST_CASE("the kernel hands a loopback datagram to the lane of the CPU that sent it", "[lanes]") {
  auto cpus = two_cpus();
  if (cpus.empty()) return;
  auto lanes = bind_group(cpus);
  for (std::size_t from = 0; from < 2; ++from) {
    auto tx = connect_udp(endpoint::local_of(lanes[0].fd.get()));
    REQUIRE(send_from(cpus[from], tx.get(), 0, 200) == 200);
    CHECK(drain(lanes[from].fd.get()) == 200);
    CHECK(drain(lanes[1 - from].fd.get()) == 0);
  }
}

TEST_CASE("a flow whose sender moves to another CPU is counted once over both lanes", "[lanes]") {
  auto cpus = two_cpus();
  if (cpus.empty()) return;
  serve::udp_port port(bind_group(cpus), true);
  auto tx = connect_udp(endpoint::local_of(port.fd()));
  auto flows = std::make_shared<serve::udp_flows>(std::vector<endpoint>{endpoint::local_of(tx.get())}, port.lanes());
  port.attach(flows);
  // Unlike the test above, the lanes' threads read as it goes: no buffer limit applies.
  REQUIRE(send_from(cpus[0], tx.get(), 0, 1000) == 1000);
  REQUIRE(send_from(cpus[1], tx.get(), 1000, 700) == 700);
  for (int i = 0; i < 200 && serve::totals_of(*flows, 0).packets < 1700; ++i) ::usleep(10'000);
  port.detach(flows);

  flow_totals t = serve::totals_of(*flows, 0);
  CHECK(flows->at(0, 0).packets.get() == 1000);
  CHECK(flows->at(1, 0).packets.get() == 700);
  CHECK(t.packets == 1700);
  CHECK(t.bytes == 1700 * 64);
  CHECK(t.next_seq == 1700);
  CHECK(t.out_of_order == 0);
  bool shared = false;
  CHECK(port.drops_since(*flows, shared) == 0);
  CHECK(port.unattributed() == 0);
  CHECK(serve::lanes_used(*flows) == "0+1");
}

TEST_CASE("iperf3's 4-byte hellos are kept only for a session waiting at their address, within its streams",
          "[lanes]") {
  serve::udp_port port(bind_group({-1}), true);
  const endpoint to = endpoint::local_of(port.fd());
  auto a = connect_udp(to);
  auto b = connect_udp(to);
  auto d = connect_udp(to);
  auto other_address = connect_udp(to, endpoint::from_numeric("127.0.0.2", 0));
  const std::uint32_t hello = 0x36373839, other = 0x01020304;
  auto wait_for = [&](auto done) {
    for (int i = 0; i < 300 && !done(); ++i) ::usleep(10'000);
  };
  const endpoint from_a = endpoint::local_of(a.get()), from_b = endpoint::local_of(b.get());
  // The kernel stamps a datagram on arrival only while some socket on the host asks for timestamps (and
  // turns that on in deferred work); one that arrives before has none and is stamped when read, which
  // would make the stale hello below look new. A netserve whose lanes have run keeps them on; a port that
  // never ran a lane on a host where nothing asks for timestamps does not (a known limit).
  const auto stamping = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
  const int on = 1;
  REQUIRE(::setsockopt(stamping.get(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0);
  ::usleep(300'000);
  // Nobody waits: the lanes do not even run. The hello waits in the socket and is older than any
  // session that waits from now on: never taken.
  REQUIRE(::send(a.get(), &hello, 4, 0) == 4);
  ::usleep(20'000);
  REQUIRE(port.expect_hellos("one", from_a, 2, wall_ns()));
  CHECK_FALSE(port.expect_hellos("two", from_b, 1, wall_ns()));  // one session of an address at a time
  // Another address floods: its hellos are foreign, and the waiting session's still get through.
  for (int i = 0; i < 2000; ++i) REQUIRE(::send(other_address.get(), &hello, 4, 0) == 4);
  REQUIRE(::send(a.get(), &other, 4, 0) == 4);  // 4 bytes, not a hello
  REQUIRE(::send(b.get(), &hello, 4, 0) == 4);
  std::optional<endpoint> got;
  wait_for([&] { return bool(got = port.take_hello("one")); });
  REQUIRE(got);
  // Both sockets share 127.0.0.1: a hello is the session's by address, from whichever socket sent it; a's
  // stale one is never among them. (One at a time: two sockets' datagrams may reach different lanes, whose
  // order under load is no order.)
  CHECK(got->port() == from_b.port());
  REQUIRE(::send(b.get(), &hello, 4, 0) == 4);  // the same stream again: not a second one
  REQUIRE(::send(a.get(), &hello, 4, 0) == 4);
  got.reset();
  wait_for([&] { return bool(got = port.take_hello("one")); });
  REQUIRE(got);
  CHECK(got->port() == from_a.port());
  // Two streams were all it waited for: a third source of its address is foreign.
  REQUIRE(::send(d.get(), &hello, 4, 0) == 4);
  // Foreign: the stale hello, the flood, the datagram that was no hello, the third source.
  wait_for([&] { return port.unattributed() >= 2003; });
  CHECK(port.unattributed() == 2003);
  CHECK_FALSE(port.take_hello("one"));

  // The session ends: its address's hellos are foreign again, and another address may wait for its own.
  port.stop_expecting("one");
  REQUIRE(port.expect_hellos("three", endpoint::local_of(other_address.get()), 1, wall_ns()));
  REQUIRE(::send(a.get(), &hello, 4, 0) == 4);
  REQUIRE(::send(other_address.get(), &hello, 4, 0) == 4);
  got.reset();
  wait_for([&] { return bool(got = port.take_hello("three")); });
  REQUIRE(got);
  CHECK(got->address() == "127.0.0.2");
  wait_for([&] { return port.unattributed() > 2003; });
  CHECK(port.unattributed() == 2004);
  CHECK_FALSE(port.take_hello("one"));
  port.stop_expecting("three");
}
