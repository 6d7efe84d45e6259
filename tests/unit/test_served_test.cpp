#include "core/sys/endpoint.hpp"
#include "core/sys/socket.hpp"
#include "netserve/server/served_test.hpp"
#include "netserve/server/udp_port.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <catch2/catch.hpp>

#include <memory>
#include <utility>
#include <vector>

using namespace nb;

namespace {

// Both ends of one TCP connection on 127.0.0.1: [0] the accepted side (what netserve attaches), [1] the client's.
std::pair<fd_handle, fd_handle> loopback_connection() {
  fd_handle listener = make_socket(AF_INET, SOCK_STREAM);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(listener.get(), 4) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
  fd_handle client = make_socket(AF_INET, SOCK_STREAM);
  REQUIRE(::connect(client.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  fd_handle accepted(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  REQUIRE(accepted);
  return {std::move(accepted), std::move(client)};
}

serve::served_test tcp_test(std::uint32_t streams, const endpoint& peer) {
  const endpoint local = endpoint::local_of(bind_udp(endpoint::from_numeric("127.0.0.1", 0)).get());
  auto port = std::make_shared<serve::udp_port>(serve::bind_lanes(local, {-1}, 1 << 20), true);
  test_request r;
  r.kind = test_kind::tcp_stream;
  r.streams = streams;
  r.message_size = 1024;
  r.duration_s = 0.2;
  auto own = std::make_shared<serve::own_sockets>();
  own->ports.add(local.port());
  return serve::served_test(1, "cookie", r, peer, local, port, own);
}

}  // namespace

TEST_CASE("a TCP data connection that fits its test is attached, and one that does not is refused with why",
          "[served_test]") {
  serve::served_test t = tcp_test(1, endpoint::from_numeric("127.0.0.1", 40000));
  auto [first, first_client] = loopback_connection();
  CHECK_FALSE(t.attach_tcp(0, std::move(first)));
  CHECK(t.all_data_attached());
  auto [again, again_client] = loopback_connection();
  const serve::attach_refusal taken = t.attach_tcp(0, std::move(again));
  REQUIRE(taken);
  CHECK(*taken == "stream 0 is already connected");
  auto [beyond, beyond_client] = loopback_connection();
  CHECK(t.attach_tcp(1, std::move(beyond)) == serve::attach_refusal("stream 1 is out of range"));
  auto [next, next_client] = loopback_connection();
  CHECK(t.attach_next_tcp(std::move(next)) == serve::attach_refusal("every stream of the test is connected already"));
}

TEST_CASE("a TCP data connection from another address than the test's client is refused", "[served_test]") {
  serve::served_test t = tcp_test(1, endpoint::from_numeric("127.0.0.2", 40000));
  auto [conn, client] = loopback_connection();
  CHECK(t.attach_tcp(0, std::move(conn)) ==
        serve::attach_refusal("data connection from another address than the control connection"));
  CHECK_FALSE(t.all_data_attached());
}
