// iperf3's wire format as netserve reads and writes it (core/wire/iperf3/iperf3_wire.hpp), with what iperf3 3.12 really
// sends (captured with iperf3 --debug), and iperf3's UDP datagram header (core/wire/native/flow.hpp).
#include "core/wire/iperf3/iperf3_wire.hpp"
#include "core/wire/native/flow.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>

#include <string>

namespace i3 = nb::iperf3;

TEST_CASE("iperf3: a cookie is 36 letters of its alphabet and a NUL, and netload's frames never look like one",
          "[iperf3]") {
  std::string cookie = "abcdefghijklmnopqrstuvwxyz2345672345";
  cookie.push_back('\0');
  CHECK(i3::is_cookie(cookie));
  CHECK_FALSE(i3::is_cookie(cookie.substr(0, 36)));
  std::string bad = cookie;
  bad[3] = '1';  // not in base32's alphabet
  CHECK_FALSE(i3::is_cookie(bad));
  bad = cookie;
  bad[36] = 'a';
  CHECK_FALSE(i3::is_cookie(bad));
  // A netload frame's length is at most 64 KiB: its first byte is 0.
  CHECK_FALSE(i3::is_cookie_char(0));
  CHECK_FALSE(i3::is_cookie_char(0x7f));
  CHECK(i3::is_cookie_char('a'));
  CHECK(i3::is_cookie_char('7'));
}

TEST_CASE("iperf3: 3.12's parameters parse, flags as present keys", "[iperf3]") {
  const auto p = i3::parse_params(
      R"({"udp":true,"omit":0,"time":3,"num":0,"blockcount":0,"parallel":2,"len":16,"bandwidth":100000000,)"
      R"("pacing_timer":1000,"udp_counters_64bit":1,"client_version":"3.12"})");
  CHECK(p.udp);
  CHECK_FALSE(p.tcp);
  CHECK(p.time == 3);
  CHECK(p.parallel == 2);
  CHECK(p.len == 16);
  CHECK(p.bandwidth == 100'000'000);
  CHECK(p.udp_counters_64bit);
  CHECK_FALSE(p.reverse);
  CHECK(p.client_version == "3.12");
  CHECK(p.unknown.empty());
  // Encoded and read again: the same test.
  const auto again = i3::parse_params(i3::encode_params(p));
  CHECK(again.parallel == 2);
  CHECK(again.udp_counters_64bit);
  CHECK(again.bandwidth == p.bandwidth);
  // As iperf3's cJSON reads them: a number is a double (a whole one fills an integer), a flag is its key.
  const auto loose = i3::parse_params(R"({"tcp":1,"reverse":false,"MSS":1400.0,"TOS":1e2,"time":1})");
  CHECK(loose.tcp);
  CHECK(loose.reverse);
  CHECK(loose.mss == 1400);
  CHECK(loose.tos == 100);
  CHECK(loose.omit == 0);  // absent: the default
  CHECK_THROWS_WITH(i3::parse_params(R"({"MSS":"1400"})"), Catch::Contains("'MSS' must be a number"));
}

TEST_CASE("iperf3: malformed parameters are refused naming the field, unknown ones are listed", "[iperf3]") {
  CHECK_THROWS_WITH(i3::parse_params(R"({"tcp":true,"parallel":"2"})"), Catch::Contains("'parallel' must be a number"));
  CHECK_THROWS_WITH(i3::parse_params(R"({"tcp":true,"len":1.5})"), Catch::Contains("'len' must be a whole number"));
  CHECK_THROWS_WITH(i3::parse_params(R"({"tcp":true,"num":-1})"), Catch::Contains("'num' is out of range"));
  CHECK_THROWS_WITH(i3::parse_params(R"({"tcp":true,"congestion":7})"),
                    Catch::Contains("'congestion' must be a string"));
  CHECK_THROWS_WITH(i3::parse_params("[1]"), Catch::Contains("not a JSON object"));
  CHECK_THROWS_WITH(i3::parse_params("{"), Catch::Contains("not JSON"));
  CHECK_THROWS_WITH(i3::parse_params(std::string(6000, '[') + std::string(6000, ']')),
                    Catch::Contains("nested too deep"));
  CHECK_THROWS_WITH(i3::parse_params(std::string(i3::max_json_size + 1, ' ')), Catch::Contains("more than"));
  CHECK(i3::parse_params(R"({"tcp":true,"fq_rate_new":1})").unknown == std::vector<std::string>{"fq_rate_new"});
  // What 3.19 adds (src/iperf_api.c at tag 3.19.1) is known: --skip-rx-copy served, --mptcp refused by name.
  const auto newer = i3::parse_params(R"({"tcp":true,"skip_rx_copy":1,"mptcp":true})");
  CHECK(newer.unknown.empty());
  CHECK(newer.skip_rx_copy == 1);
  CHECK(newer.mptcp);
}

TEST_CASE("iperf3: results parse with -1 as cJSON prints it (2^64 - 1), and encode back", "[iperf3]") {
  const auto r = i3::parse_results(
      R"({"cpu_util_total":66.7,"cpu_util_user":8.3,"cpu_util_system":58.4,"sender_has_retransmits":18446744073709551615,)"
      R"("streams":[{"id":1,"bytes":761376,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":47586,)"
      R"("start_time":0,"end_time":1.000016},{"id":3,"bytes":5,"retransmits":-1,"jitter":0.5,"errors":2,"packets":7}]})");
  CHECK(r.sender_has_retransmits == -1);
  REQUIRE(r.streams.size() == 2);
  CHECK(r.streams[0].retransmits == -1);
  CHECK(r.streams[0].packets == 47586);
  CHECK(r.streams[0].end_time == Approx(1.000016));
  CHECK(r.streams[1].id == 3);
  CHECK(r.streams[1].retransmits == -1);
  CHECK(r.streams[1].end_time == 0);  // absent, as from servers before 3.2
  const auto again = i3::parse_results(i3::encode_results(r));
  CHECK(again.streams[1].errors == 2);
  CHECK(again.streams[0].bytes == 761376);
  CHECK_THROWS_WITH(i3::parse_results(R"({"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":1,"streams":[]})"),
                    Catch::Contains("'sender_has_retransmits' is missing"));
  CHECK_THROWS_WITH(i3::parse_results(R"({"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":1,)"
                                      R"("sender_has_retransmits":0,"streams":[{"id":1}]})"),
                    Catch::Contains("'bytes' is missing"));
}

TEST_CASE("iperf3: frames are a 4-byte big-endian length and the JSON, at most 64 KiB", "[iperf3]") {
  const std::string f = i3::frame("{}");
  REQUIRE(f.size() == 6);
  unsigned char h[4];
  std::memcpy(h, f.data(), 4);
  CHECK(i3::decode_length(h) == 2);
  const unsigned char big[4] = {0, 1, 0, 1};
  CHECK_THROWS_AS(i3::decode_length(big), nb::protocol_error);
}

TEST_CASE("iperf3's UDP header: seconds, microseconds, a count from 1, 32- or 64-bit, big-endian", "[iperf3]") {
  unsigned char p[16] = {};
  const std::int64_t t = 1'700'000'000'123'456'000;
  nb::write_header(nb::payload_format::iperf3_32, p, 41, t);
  std::uint32_t word;
  std::memcpy(&word, p, 4);
  CHECK(ntohl(word) == 1'700'000'000u);
  std::memcpy(&word, p + 4, 4);
  CHECK(ntohl(word) == 123'456u);
  std::memcpy(&word, p + 8, 4);
  CHECK(ntohl(word) == 42u);  // iperf3's first datagram is number 1
  std::uint64_t seq = 0;
  std::int64_t sent = 0;
  nb::read_header(nb::payload_format::iperf3_32, p, seq, sent);
  CHECK(seq == 41);
  CHECK(sent == t);
  nb::write_header(nb::payload_format::iperf3_64, p, (1ULL << 40), t);
  CHECK(p[8] == 0);
  CHECK(p[10] == 1);  // 2^40 + 1, big-endian
  CHECK(p[15] == 1);
  nb::read_header(nb::payload_format::iperf3_64, p, seq, sent);
  CHECK(seq == (1ULL << 40));
  // A receiver counting iperf3's datagrams: sequence analysis on iperf3's count, its 12-byte header.
  nb::recv_counters c;
  c.format = nb::payload_format::iperf3_32;
  for (std::uint64_t k : {0, 1, 3, 2}) {
    nb::write_header(nb::payload_format::iperf3_32, p, k, t);
    c.on_receive(p, 12, 0, 12, t + 1000);
  }
  CHECK(c.sequenced.get() == 4);
  CHECK(c.next_seq.get() == 4);
  CHECK(c.out_of_order.get() == 1);
}
