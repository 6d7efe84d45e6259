// Malformed control input closes that connection with a logged reason; netserve keeps serving others.
#include "core/base/clock.hpp"
#include "core/wire/native/protocol.hpp"
#include "tests/integration/netserve_fixture.hpp"
#include "tests/integration/raw_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

using nb::test::connect_to;
using nb::test::netload_argv;
using nb::test::netserve_process;
using nb::test::send_and_expect_close;

namespace {

std::string frame_of(const std::string& payload) {
  std::uint32_t len = htonl(static_cast<std::uint32_t>(payload.size()));
  return std::string(reinterpret_cast<const char*>(&len), 4) + payload;
}

void check_still_serves(netserve_process& server) {
  auto c = nb::test::run(netload_argv(server.port(), "UDP_STREAM", 0.5, {"--json", "--pps", "10000"}, {"-m", "16"}));
  INFO(c.err);
  CHECK(nb::test::ran_and_reconciled(c.status));
}

void wait_for_log(netserve_process& server, const std::string& text) {
  for (int i = 0; i < 300 && server.log().find(text) == std::string::npos; ++i) ::usleep(10'000);
  INFO(server.log());
  CHECK_THAT(server.log(), Catch::Contains(text));
}

}  // namespace

TEST_CASE("malformed control input is refused - logged - and does not stop the server", "[integration][malformed]") {
  netserve_process server(1, {"--first-message-timeout", "1"});
  const auto port = server.port();

  SECTION("truncated frame") {
    send_and_expect_close(port, std::string("\0\0\0\x64", 4) + "{\"v\":1", true);
    wait_for_log(server, "lost: End of file");
  }
  SECTION("oversized length") {
    send_and_expect_close(port, std::string("\x7f\xff\xff\xff", 4), false);
    wait_for_log(server, "exceeds the 65536-byte limit");
  }
  SECTION("a cookie's first letters, then no cookie: neither netload's nor iperf3's") {
    send_and_expect_close(port, std::string(36, 'a') + '\x01', false);
    wait_for_log(server, "neither a netload frame nor an iperf3 cookie");
  }
  SECTION("wrong field types") {
    send_and_expect_close(
        port, frame_of(R"({"v":7,"type":"test_request","body":{"kind":"UDP_STREAM","message_size":"big"}})"), false);
    wait_for_log(server, "field 'message_size' must be a non-negative integer");
  }
  SECTION("unknown message") {
    send_and_expect_close(port, frame_of(R"({"v":7,"type":"launch_missiles","body":{}})"), false);
    wait_for_log(server, "unknown message type 'launch_missiles'");
  }
  SECTION("a body nested 6000 deep: refused while parsing, not a stack overflow") {
    const std::string deep = R"({"v":7,"type":"start","body":)" + std::string(6000, '[') + std::string(6000, ']') + "}";
    send_and_expect_close(port, frame_of(deep), false);
    wait_for_log(server, "message nested deeper than 16 levels");
  }
  SECTION("a message type that tries to forge a log line is logged escaped") {
    send_and_expect_close(
        port, frame_of("{\"v\":7,\"type\":\"bogus\\nnetserve: port 1 test 99 \\u001b[31m\",\"body\":{}}"), false);
    wait_for_log(server, "unknown message type 'bogus\\nnetserve: port 1 test 99 \\x1b[31m'");
    CHECK(server.log().find("\nnetserve: port 1 test 99") == std::string::npos);
    CHECK(server.log().find('\x1b') == std::string::npos);
  }
  SECTION("wrong protocol version") {
    send_and_expect_close(port, frame_of(R"({"v":99,"type":"start","body":{"start_wall_ns":0}})"), false);
    wait_for_log(server, "protocol version 99 is not supported");
  }
  SECTION("random bytes") {
    std::mt19937 rng(42);
    std::string junk(512, '\0');
    for (auto& ch : junk) ch = static_cast<char>(rng());
    junk[0] = 0;  // a plausible length, so the payload is read and must fail to parse
    junk[1] = 0;
    junk[2] = 1;
    junk[3] = 0;
    send_and_expect_close(port, junk, false);
    wait_for_log(server, "message is not valid JSON");
  }
  SECTION("a connection that sends nothing") {
    send_and_expect_close(port, "", false);
    wait_for_log(server, "timed out after 1.0 s waiting for a message");
  }
  SECTION("a data connection with an unknown cookie") {
    send_and_expect_close(port, frame_of(R"({"v":7,"type":"data","body":{"cookie":"nope","stream":0}})"), false);
    wait_for_log(server, "data connection names no test on this port");
  }
  check_still_serves(server);
}

TEST_CASE("a silent connection does not hold up other clients", "[integration][malformed]") {
  netserve_process server(1, {"--first-message-timeout", "5"});
  int idle = connect_to(server.port());
  check_still_serves(server);  // runs while the silent connection is still open
  ::close(idle);
}

TEST_CASE("SIGTERM during a test: netserve exits cleanly and netload says why it failed", "[integration][signals]") {
  netserve_process server(1);
  nb::test::child client(netload_argv(server.port(), "UDP_STREAM", 5, {"--pps", "20000"}, {"-m", "100"}));
  ::usleep(700'000);  // the test is running
  auto s = server.stop();
  INFO(s.err);
  CHECK(s.status == 0);  // also under ASan: no use-after-free while suspended sessions are torn down
  CHECK_THAT(s.err, Catch::Contains("shutting down"));
  auto c = client.wait();
  CHECK(c.status == 1);
  CHECK_THAT(c.err, Catch::Contains("the server closed the control connection"));
}

TEST_CASE("a client that vanishes before a far start instant does not hold up the server", "[integration][signals]") {
  netserve_process server(1);
  double far = static_cast<double>(nb::wall_ns()) / 1e9 + 25;  // netserve accepts up to 30 s ahead
  {
    nb::test::child gone(netload_argv(server.port(), "UDP_STREAM", 5,
                                      {"--reverse", "--pps", "1000", "--start-at", std::to_string(far)},
                                      {"-m", "100"}));
    ::usleep(500'000);  // registered, its sender thread waiting for the instant; then killed
  }
  auto t0 = std::chrono::steady_clock::now();
  check_still_serves(server);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
}
