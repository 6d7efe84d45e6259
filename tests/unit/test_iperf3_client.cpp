// What netload --peer iperf3 takes from an iperf3 server (core/wire/iperf3/iperf3_client.hpp): the states in their
// one order, each other one an error naming it; refusals in iperf3's words; the results and the version.
// Also a port a peer names (core/wire/native/protocol.hpp) and a result's peer texts made printable
// (core/result/result.hpp).
#include "core/result/result.hpp"
#include "core/wire/iperf3/iperf3_client.hpp"
#include "core/wire/native/protocol.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace i3 = nb::iperf3;
using Catch::Matchers::Contains;

namespace {

signed char byte(i3::state s) { return static_cast<signed char>(s); }

std::string one_stream_results(const std::string& extra) {
  return R"({"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":18446744073709551615,)"
         R"("streams":[{"id":1,"bytes":1000,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,)"
         R"("start_time":0,"end_time":1}])" +
         extra + "}";
}

bool has_control_byte(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

}  // namespace

TEST_CASE("iperf3 client: the setup takes CREATE_STREAMS, TEST_START, TEST_RUNNING once each, in order", "[iperf3]") {
  i3::setup_states s;
  CHECK(std::string(s.awaited()) == "CREATE_STREAMS");
  CHECK(s.take(byte(i3::state::create_streams)) == i3::setup_states::step::create_streams);
  CHECK(std::string(s.last()) == "CREATE_STREAMS");
  CHECK(s.take(byte(i3::state::test_start)) == i3::setup_states::step::wait);
  CHECK(std::string(s.awaited()) == "TEST_RUNNING");
  CHECK(s.take(byte(i3::state::test_running)) == i3::setup_states::step::run);
  CHECK_THROWS_WITH(s.take(byte(i3::state::test_start)),
                    Contains("TEST_START after TEST_RUNNING") || Contains("TEST_START a second time"));
}

TEST_CASE("iperf3 client: a state out of its place in the setup is an error naming it", "[iperf3]") {
  {
    i3::setup_states s;
    s.take(byte(i3::state::create_streams));
    CHECK_THROWS_WITH(s.take(byte(i3::state::create_streams)), "iperf3 server sent CREATE_STREAMS a second time");
  }
  {
    i3::setup_states s;
    CHECK_THROWS_WITH(s.take(byte(i3::state::test_start)),
                      "iperf3 server sent TEST_START after the parameters, where CREATE_STREAMS comes");
  }
  {
    i3::setup_states s;
    s.take(byte(i3::state::create_streams));
    s.take(byte(i3::state::test_start));
    CHECK_THROWS_WITH(s.take(byte(i3::state::test_start)), "iperf3 server sent TEST_START a second time");
  }
  {
    i3::setup_states s;
    s.take(byte(i3::state::create_streams));
    CHECK_THROWS_WITH(s.take(byte(i3::state::test_running)),
                      "iperf3 server sent TEST_RUNNING after CREATE_STREAMS, where TEST_START comes");
  }
  {
    i3::setup_states s;
    CHECK_THROWS_WITH(s.take(99),
                      "iperf3 server sent state 99 (no iperf3 state) after the parameters, where "
                      "CREATE_STREAMS comes");
    CHECK_THROWS_AS(s.take(byte(i3::state::exchange_results)), nb::protocol_error);
  }
}

TEST_CASE("iperf3 client: a lone state where only one may come is named, with the one expected", "[iperf3]") {
  CHECK_NOTHROW(i3::expect_state(byte(i3::state::param_exchange), i3::state::param_exchange, "first"));
  CHECK_THROWS_WITH(i3::expect_state(byte(i3::state::test_start), i3::state::exchange_results, "after TEST_END"),
                    "iperf3 server sent TEST_START after TEST_END, where EXCHANGE_RESULTS comes");
  CHECK_THROWS_WITH(i3::expect_state(-7, i3::state::param_exchange, "first"),
                    "iperf3 server sent state -7 (no iperf3 state) first, where PARAM_EXCHANGE comes");
}

TEST_CASE("iperf3 client: refusals in the words of iperf3's own client", "[iperf3]") {
  CHECK(i3::is_refusal(byte(i3::state::access_denied)));
  CHECK(i3::is_refusal(byte(i3::state::server_error)));
  CHECK(i3::is_refusal(byte(i3::state::server_terminate)));
  CHECK_FALSE(i3::is_refusal(byte(i3::state::test_start)));
  CHECK_THAT(i3::refusal_text(byte(i3::state::access_denied), 0), Contains("busy running a test"));
  CHECK(i3::refusal_text(byte(i3::state::server_error), 6) ==
        "iperf3 server refused the test: number of parallel streams too large");
  CHECK(i3::refusal_text(byte(i3::state::server_error), 4242) ==
        "iperf3 server refused the test: iperf3 error code 4242");
}

TEST_CASE("iperf3 client: the server's results give its streams and its version, as sent", "[iperf3]") {
  const auto r = i3::read_server_results(
      one_stream_results(R"(,"server_output_json":{"start":{"version":"iperf 3.12\u001b[2J"}})"), 1);
  REQUIRE(r.figures.streams.size() == 1);
  CHECK(r.figures.streams[0].bytes == 1000);
  CHECK(r.version == "iperf3 3.12\x1b[2J");  // escape_peer_text makes the result printable
  CHECK(i3::read_server_results(one_stream_results(R"(,"server_output_text":"Accepted")"), 1).version.empty());
  CHECK_THROWS_WITH(i3::read_server_results(one_stream_results(""), 2), "iperf3 results: 1 streams, not 2");
  CHECK_THROWS_WITH(i3::read_server_results("[1]", 1), "iperf3 results: not a JSON object");
  CHECK_THROWS_WITH(i3::read_server_results("{", 1), "iperf3 results: not JSON");
  CHECK_THROWS_WITH(i3::read_server_results(std::string(i3::max_server_results_size + 1, ' '), 1),
                    Contains("more than"));
}

TEST_CASE("a port a peer names is 1..65535, never cut to 16 bits", "[protocol]") {
  CHECK(nb::peer_port(1, "data port") == 1);
  CHECK(nb::peer_port(65535, "data port") == 65535);
  CHECK_THROWS_WITH(nb::peer_port(65558, "netserver's data port"),
                    "netserver's data port 65558 is outside 1..65535: refused");
  CHECK_THROWS_AS(nb::peer_port(0, "data port"), nb::protocol_error);
  CHECK_THROWS_AS(nb::peer_port(-1, "data port"), nb::protocol_error);
  CHECK_THROWS_AS(nb::peer_port(0x100000016, "data port"), nb::protocol_error);
}

TEST_CASE("a result's texts from a peer are made printable, names cut at 256 bytes", "[result]") {
  nb::test_result r;
  r.server_version = "iperf3 3.12\x1b[2J\x1b]0;owned\x07\r\nFORGED: receiver ok";
  r.receiver_counted_by = r.server_version;
  r.receiver.batching = std::string(1000, 'g') + "\x1b";
  r.error = "server: busy\x1b[2J\n";
  r.tcp = nb::tcp_figures{};
  r.tcp->congestion = "bbr\x07";
  r.segmentation = nb::segmentation_figures{"gso", true, "why\x1b"};
  nb::escape_peer_text(r);
  CHECK(r.server_version == "iperf3 3.12\\x1b[2J\\x1b]0;owned\\x07\\r\\nFORGED: receiver ok");
  CHECK(r.error == "server: busy\\x1b[2J\\n");
  CHECK(*r.tcp->congestion == "bbr\\x07");
  CHECK(r.segmentation->why == "why\\x1b");
  CHECK_THAT(r.receiver.batching, Contains("(1001 bytes)"));
  for (const std::string* s : {&r.server_version, &r.receiver_counted_by, &r.receiver.batching, &r.error})
    CHECK_FALSE(has_control_byte(*s));
}
