// A stop netload --search caught between its trials, asked for once a trial's own handler is in place:
// the trial ends before it connects or sends, marked interrupted, as a stop before the start instant.
#include "netload/native/client.hpp"

#include <catch2/catch.hpp>

#include <csignal>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace nb;

TEST_CASE("netload: a stop caught before the test's own handler ends the test before it connects", "[stop]") {
  // A listener that is never answered: a connection to it would show in its queue.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);  // accept() says at once
  REQUIRE(listener >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) == 0);

  load::client_options o;
  o.host = "127.0.0.1";
  o.port = ntohs(a.sin_port);
  o.kind = test_kind::udp_stream;
  o.duration_s = 1;
  load::client_events events;
  int asked = 0;
  events.stop_before = [&asked] {
    ++asked;
    return SIGTERM;
  };
  boost::asio::io_context io;
  const test_result r = load::run_test(io, o, std::move(events));

  CHECK(asked == 1);
  CHECK_FALSE(r.ok);
  REQUIRE(r.interrupted);
  CHECK(r.interrupted->signal == "SIGTERM");
  CHECK_THAT(r.error, Catch::Contains("nothing was sent"));
  const int accepted = ::accept(listener, nullptr, nullptr);
  CHECK(accepted < 0);  // no connection came
  if (accepted >= 0) ::close(accepted);
  ::close(listener);
}
