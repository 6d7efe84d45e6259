// The key check against a man in the middle: a relay between a keyed netload and a keyed netserve can
// pass frames on, or not, but cannot get a test of its own, alter a frame, or replay one unnoticed.
#include "core/wire/native/frame_io.hpp"
#include "core/wire/native/protocol.hpp"
#include "tests/integration/frame_relay.hpp"
#include "tests/integration/netserve_fixture.hpp"
#include "tests/support/temp_file.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>

#include <set>

using nb::test::frame_relay;
using nb::test::leg;
using nb::test::netload_argv;
using nb::test::netserve_process;

namespace {

struct key_file : nb::test::temp_file {
  explicit key_file(const std::string& key) : temp_file(key + "\n", 0600) {}
};

// A light keyed TCP test through `port`: TCP, so that its data connection goes through a relay too.
std::vector<std::string> keyed_tcp(std::uint16_t port, const key_file& key, std::vector<std::string> extra = {}) {
  std::vector<std::string> global{"--json", "--psk-file", key.path, "--pps", "2000", "--connect-timeout", "5"};
  global.insert(global.end(), extra.begin(), extra.end());
  return netload_argv(port, "TCP_STREAM", 1, global, {"-m", "1000"});
}

void wait_for_log(netserve_process& server, const std::string& text) {
  for (int i = 0; i < 500 && server.log().find(text) == std::string::npos; ++i) ::usleep(10'000);
  INFO(server.log());
  CHECK_THAT(server.log(), Catch::Contains(text));
}

void check_still_serves(netserve_process& server, const key_file& key) {
  auto ok = nb::test::run(keyed_tcp(server.port(), key));
  INFO(ok.err);
  CHECK(nb::test::ran_and_reconciled(ok.status));
}

}  // namespace

TEST_CASE("a relay that passes the challenge to a keyed netload gets no test of its own", "[integration][auth]") {
  key_file key("correct horse battery staple");
  netserve_process server(1, {"--psk-file", key.path});
  std::uint16_t relay_port = 0;
  int listener = nb::test::listen_loopback(relay_port);
  // netload believes the relay is netserve; the relay opens its own connection to the real one.
  nb::test::child victim_netload(keyed_tcp(relay_port, key));
  int victim = nb::test::accept_within(listener, 10'000);
  REQUIRE(victim >= 0);
  int up = nb::test::connect_loopback(server.port());
  REQUIRE(up >= 0);

  std::string challenge, frame;
  REQUIRE(nb::test::read_frame(up, challenge));
  REQUIRE(nb::test::frame_type(challenge) == "challenge");
  REQUIRE(nb::test::write_all(victim, challenge));  // netserve's challenge, to netload
  REQUIRE(nb::test::read_frame(victim, frame));
  CHECK(nb::test::frame_type(frame) == "auth");
  REQUIRE(nb::test::write_all(up, frame));  // netload's answer, to netserve

  // Then a request of the relay's own, in the protocol version the server's challenge shows.
  nb::test_request own;
  own.kind = nb::test_kind::tcp_stream;
  own.message_size = 1000;
  own.duration_s = 1;
  own.client_version = "relay";
  std::string payload = nb::encode_payload(own), ours = "\"v\":" + std::to_string(nb::protocol_version);
  auto v = challenge.find("\"v\":");
  REQUIRE(v != std::string::npos);
  payload.replace(payload.find(ours), ours.size(), challenge.substr(v, challenge.find_first_of(",}", v) - v));
  REQUIRE(nb::test::write_all(up, nb::test::reframe(payload)));
  std::set<std::string> came;
  while (nb::test::read_frame(up, frame, 3'000)) came.insert(nb::test::frame_type(frame));
  CHECK(came.count("ready") == 0);
  wait_for_log(server, "failed its authentication check");

  ::close(up);
  ::close(victim);
  ::close(listener);
  CHECK(victim_netload.wait().status == 1);
  check_still_serves(server, key);
}

TEST_CASE("a control frame altered or replayed on the way is refused", "[integration][auth]") {
  key_file key("correct horse battery staple");
  netserve_process server(1, {"--psk-file", key.path});

  SECTION("the request, altered on its way to netserve") {
    frame_relay relay(server.port(), [](leg l, int, const std::string& f) -> std::vector<std::string> {
      std::string body = f.substr(4);
      if (l == leg::to_server && nb::test::frame_type(f) == "test_request") {
        auto at = body.find("\"dscp\":-1");
        if (at != std::string::npos) body.replace(at, 9, "\"dscp\":46");
      }
      return {nb::test::reframe(body)};
    });
    auto c = nb::test::run(keyed_tcp(relay.port(), key));
    INFO(c.err);
    CHECK(c.status == 1);
    wait_for_log(server, "failed its authentication check");
  }
  SECTION("an interval report, replayed to netload") {
    frame_relay relay(server.port(), [](leg l, int, const std::string& f) -> std::vector<std::string> {
      if (l == leg::to_client && nb::test::frame_type(f) == "interval") return {f, f};
      return {f};
    });
    auto c = nb::test::run(keyed_tcp(relay.port(), key, {"--interval", "0.25"}));
    INFO(c.err);
    CHECK(c.status == 1);
    CHECK_THAT(c.err, Catch::Contains("failed its authentication check"));
  }
  SECTION("a relay that passes every frame unaltered is only a longer path") {
    frame_relay relay(server.port(), [](leg, int, const std::string& f) -> std::vector<std::string> { return {f}; });
    auto c = nb::test::run(keyed_tcp(relay.port(), key, {"--interval", "0.25"}));
    INFO(c.err);
    CHECK(nb::test::ran_and_reconciled(c.status));
  }
  check_still_serves(server, key);
}

namespace {

// A key holder that read a test's cookie on the wire opens a data connection of its own to `port` and
// names that test; returns the server's answer (its error's reason), "" when it said nothing.
std::string intrude(std::uint16_t port, const std::string& psk, const std::string& cookie, bool own_token) {
  nb::asio::io_context io;
  std::string said;
  nb::asio::co_spawn(
      io,
      [&]() -> nb::asio::awaitable<void> {
        nb::tcp::socket s(io);
        const nb::tcp::endpoint to(nb::asio::ip::make_address("127.0.0.1"), port);
        co_await s.async_connect(to, nb::asio::use_awaitable);
        nb::frame_mac mac = co_await nb::answer_challenge(s, psk, std::chrono::seconds(5));
        // Without a token, or with one made from its own session key instead of the test's.
        std::string token = own_token ? nb::data_token(mac.key(), mac, cookie, 0) : std::string();
        const nb::message hello = nb::data_hello{cookie, 0, token};
        co_await nb::write_message(s, mac, hello);
        nb::message m = co_await nb::read_message(s, mac, std::chrono::seconds(5));
        if (auto* e = std::get_if<nb::error_msg>(&m)) said = e->reason;
      },
      [](std::exception_ptr) {});  // a closed connection leaves `said` empty
  io.run_for(std::chrono::seconds(10));
  return said;
}

}  // namespace

TEST_CASE("a data connection with the cookie but not the test's token is refused", "[integration][auth]") {
  key_file key("correct horse battery staple");
  const std::string psk = "correct horse battery staple";
  netserve_process server(1, {"--psk-file", key.path});
  for (bool own_token : {false, true}) {
    // The relay reads the cookie from `ready` and holds `ready` back until the intruder has tried, so the
    // stream it names is still free.
    std::vector<std::string> answers;
    frame_relay relay(server.port(), [&](leg l, int, const std::string& f) -> std::vector<std::string> {
      if (l == leg::to_client && nb::test::frame_type(f) == "ready") {
        auto at = f.find("\"cookie\":\"") + 10;
        answers.push_back(intrude(server.port(), psk, f.substr(at, f.find('"', at) - at), own_token));
      }
      return {f};
    });
    auto c = nb::test::run(keyed_tcp(relay.port(), key));
    INFO(c.err);
    CHECK(nb::test::ran_and_reconciled(c.status));  // the test's own data connection still got in
    REQUIRE(answers.size() == 1);
    CHECK_THAT(answers[0], Catch::Contains("data connection without a valid token"));
  }
  wait_for_log(server, "data connection without a valid token");
}
