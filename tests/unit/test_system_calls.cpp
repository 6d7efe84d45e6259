// System calls whose failure used to go unseen: a socket option on a bad descriptor read as 0, the peer
// of an unconnected socket as an empty address, and sleep_until_ns spun for ever on an instant
// clock_nanosleep refuses. They throw fmt::system_error now, or end, as the headers say.
#include "core/clock.hpp"
#include "core/endpoint.hpp"
#include "core/socket.hpp"
#include "core/udp_io.hpp"

#include <catch2/catch.hpp>

#include <system_error>

using namespace nb;

TEST_CASE("a socket call on a descriptor that is no socket throws, naming the call") {
  CHECK_THROWS_WITH(recv_buffer(-1), Catch::Contains("getsockopt(SO_RCVBUF)") && Catch::Contains("Bad file descriptor"));
  CHECK_THROWS_AS(set_recv_buffer(-1, 1 << 20), std::system_error);
  CHECK_THROWS_AS(send_buffer(-1), std::system_error);
  CHECK_THROWS_AS(tcp_mss(-1), std::system_error);
  CHECK_THROWS_AS(socket_drops(-1), std::system_error);
  CHECK_THROWS_AS(set_receive_timeout(-1, 1'000'000), std::system_error);
  CHECK_THROWS_AS(endpoint::local_of(-1), std::system_error);
}

TEST_CASE("an unconnected socket has no peer (thrown) and no path MTU (0, by design)") {
  fd_handle rx = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
  CHECK_THROWS_AS(endpoint::peer_of(rx.get()), std::system_error);
  CHECK(path_mtu(rx.get(), AF_INET) == 0);
  fd_handle tx = connect_udp(endpoint::local_of(rx.get()));
  CHECK(endpoint::peer_of(tx.get()) == endpoint::local_of(rx.get()));
  CHECK(path_mtu(tx.get(), AF_INET) > 0);
}

TEST_CASE("sleep_until_ns returns for an instant clock_nanosleep refuses instead of retrying for ever") {
  sleep_until_ns(CLOCK_MONOTONIC, -1);                    // before the clock's zero: past
  sleep_until_ns(CLOCK_THREAD_CPUTIME_ID, mono_ns());     // a clock it cannot sleep on (EINVAL)
  SUCCEED("both returned");
}
