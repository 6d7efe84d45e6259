// netserve's side of a netperf control connection (netserve/netperf/netperf_exchange.hpp): which message may come
// when, one deadline that no message moves, bounded refusals and tests; what netserve's netperf data
// socket ignores (netserve/netperf/netperf_data.hpp); the bucket that bounds what peers write to the log.
#include "core/base/clock.hpp"
#include "core/base/port_set.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/protocol.hpp"
#include "core/wire/netperf/netperf_wire.hpp"
#include "netserve/netperf/netperf_data.hpp"
#include "netserve/netperf/netperf_exchange.hpp"
#include "netserve/server/log_limiter.hpp"
#include "netserve/server/own_sockets.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>

#include <memory>

using namespace nb;
using serve::netperf_exchange;
namespace np = nb::netperf;

namespace {

constexpr std::int64_t second = 1'000'000'000;

np::block of_type(std::int32_t type) {
  np::block b = np::encode_error(type, -1);
  return b;
}

np::block udp_stream_request() {
  np::omni_request r;
  r.protocol = np::ipproto_udp;
  r.socket_type = np::nst_dgram;
  r.test_length = 10;
  return np::encode_request(r);
}

netperf_exchange exchange_at(std::int64_t t0) { return netperf_exchange(serve::netperf_exchange_limits{}, t0); }

}  // namespace

TEST_CASE("netperf exchange: a passphrase first, then requests, each served one a test, thirty at most", "[netperf]") {
  netperf_exchange x = exchange_at(0);
  CHECK(x.on_message(of_type(np::type_passphrase), 0).what == netperf_exchange::verdict::ignore);
  for (int i = 0; i < 30; ++i) {  // netperf -i 30: thirty tests on one connection
    const auto s = x.on_message(udp_stream_request(), i * second);
    REQUIRE(s.what == netperf_exchange::verdict::serve);
    CHECK(s.request.test_length == 10);
    x.test_began(i * second);
    x.test_ended(i * second + 10 * second);
  }
  CHECK(x.tests() == 30);
  CHECK_THROWS_WITH(x.on_message(udp_stream_request(), 31 * second),
                    Catch::Contains("past the 30th test on one connection"));
}

TEST_CASE("netperf exchange: one deadline outside the tests, which messages do not move and tests move by their time",
          "[netperf]") {
  netperf_exchange x = exchange_at(5 * second);
  CHECK(x.deadline_ns() == 35 * second);
  x.on_message(of_type(5), 10 * second);  // refused: moves nothing
  CHECK(x.deadline_ns() == 35 * second);
  x.on_message(udp_stream_request(), 20 * second);
  x.test_began(20 * second);
  x.test_ended(32 * second);
  CHECK(x.deadline_ns() == 47 * second);  // the 12 s the test ran
  CHECK_THROWS_WITH(x.on_message(of_type(5), 48 * second), Catch::Contains("ran past its deadline (30 s outside"));
}

TEST_CASE("netperf exchange: what the protocol does not allow is an error naming it", "[netperf]") {
  SECTION("a second passphrase") {
    netperf_exchange x = exchange_at(0);
    x.on_message(of_type(np::type_passphrase), 0);
    CHECK_THROWS_WITH(x.on_message(of_type(np::type_passphrase), 0),
                      Catch::Contains("a passphrase (type 6) after the first message"));
  }
  SECTION("a passphrase after a request") {
    netperf_exchange x = exchange_at(0);
    x.on_message(of_type(5), 0);
    CHECK_THROWS_WITH(x.on_message(of_type(np::type_passphrase), 0), Catch::Contains("after the first message"));
  }
  SECTION("a server's messages") {
    netperf_exchange x = exchange_at(0);
    CHECK_THROWS_WITH(x.on_message(of_type(np::type_setup), 0),
                      Catch::Contains("a setup response (type 98) from the client"));
    netperf_exchange y = exchange_at(0);
    CHECK_THROWS_WITH(y.on_message(of_type(np::type_results), 0),
                      Catch::Contains("a results message (type 99) from the client"));
  }
  SECTION("a message during a test") {
    netperf_exchange x = exchange_at(0);
    x.on_message(udp_stream_request(), 0);
    x.test_began(0);
    CHECK_THROWS_WITH(x.on_message(udp_stream_request(), 0), Catch::Contains("a message during a test"));
  }
  SECTION("nothing is taken once it failed") {
    netperf_exchange x = exchange_at(0);
    CHECK_THROWS(x.on_message(of_type(np::type_setup), 0));
    CHECK_THROWS_WITH(x.on_message(udp_stream_request(), 0), Catch::Contains("closed"));
  }
}

TEST_CASE("netperf exchange: unknown types and bad requests are refused as netserver does, four at most", "[netperf]") {
  netperf_exchange x = exchange_at(0);
  const auto unknown = x.on_message(of_type(5), 0);
  CHECK(unknown.what == netperf_exchange::verdict::refuse);
  CHECK(unknown.errno_value == np::unknown_test_errno);
  CHECK(unknown.type == 5);
  np::block bad = udp_stream_request();
  std::fill(bad.begin() + 8 + 4 * 38, bad.begin() + 8 + 4 * 38 + 16, 'x');  // congestion control without its NUL
  const auto undecodable = x.on_message(bad, 0);
  CHECK(undecodable.what == netperf_exchange::verdict::refuse);
  CHECK(undecodable.type == np::type_setup);
  x.on_message(udp_stream_request(), 0);
  x.refused();  // the session's own checks refused the third
  x.on_message(of_type(7), 0);
  CHECK(x.refusals() == 4);
  CHECK_THROWS_WITH(x.on_message(of_type(5), 0), Catch::Contains("more than 4 messages refused on one connection"));
}

TEST_CASE("log limiter: 20 lines at once, then one a second, and the next line says how many were left out",
          "[netperf]") {
  serve::log_limiter l(serve::peer_log_per_second, serve::peer_log_burst);
  std::uint64_t left_out = 0, said_left_out = 0;
  int written = 0;
  for (std::int64_t i = 0; i < 50'000; ++i) {  // 50 000 in 2.9 s
    if (!l.allow(second + i * 58'000, left_out)) continue;
    ++written;
    said_left_out += left_out;
  }
  CHECK(written == 22);  // 20, and one for each of the 2.9 s
  CHECK(l.allow(10 * second, left_out));
  CHECK(said_left_out + left_out == 50'000 - 22);  // each line left out is counted by the next one written
}

TEST_CASE("port set: counted, so a port two sockets hold stays until both are gone", "[netperf]") {
  auto own = std::make_shared<serve::own_sockets>();
  {
    port_claim udp = serve::claim_ports(own, {5001});
    {
      port_claim tcp = serve::claim_ports(own, {5001, 5002});
      CHECK(own->ports.contains(5001));
      CHECK(own->ports.contains(5002));
    }
    CHECK(own->ports.contains(5001));
    CHECK_FALSE(own->ports.contains(5002));
    port_claim moved = std::move(udp);
    CHECK(own->ports.contains(5001));
  }
  CHECK_FALSE(own->ports.contains(5001));
  CHECK_FALSE(own->targets.contains(5001));
}

TEST_CASE("netperf UDP_RR socket: answers its client, never a datagram from one of netserve's own sockets",
          "[netperf][self]") {
  fd_handle socket = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
  const endpoint data = endpoint::local_of(socket.get());
  fd_handle client = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
  fd_handle itself = bind_udp(endpoint::from_numeric("127.0.0.1", 0));  // stands for one of netserve's ports
  auto own = std::make_shared<serve::own_sockets>();
  port_claim claim = serve::claim_ports(own, {endpoint::local_of(itself.get()).port()});
  serve::netperf_plan plan;
  plan.rr = true;
  plan.request_size = plan.response_size = 10;
  plan.peer = endpoint::from_numeric("127.0.0.1", 0);
  plan.peer_local = true;
  plan.own = own;
  plan.deadline_mono_ns = mono_ns() + 5 * second;
  serve::netperf_data rr(std::move(socket), plan);
  const char request[10] = {};
  for (int i = 0; i < 3; ++i) {
    REQUIRE(::sendto(itself.get(), request, sizeof request, 0, data.data(), data.size()) == 10);
    REQUIRE(::sendto(client.get(), request, sizeof request, 0, data.data(), data.size()) == 10);
  }
  auto answers = [](int fd) {
    int n = 0;
    char buf[64];
    for (pollfd p{fd, POLLIN, 0}; ::poll(&p, 1, 300) > 0; ++n) ::recv(fd, buf, sizeof buf, 0);
    return n;
  };
  CHECK(answers(client.get()) == 3);
  CHECK(answers(itself.get()) == 0);
  REQUIRE(::sendto(client.get(), request, 0, 0, data.data(), data.size()) == 0);  // the end
  for (int i = 0; i < 100 && !rr.done(); ++i) ::usleep(10'000);
  REQUIRE(rr.done());
  CHECK(rr.counts().transactions == 3);
  CHECK(rr.counts().from_own == 3);
}
