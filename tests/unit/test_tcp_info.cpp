// TCP_INFO samples: read from a real loopback connection, cut short as an older kernel returns them,
// summed over streams and intervals, and through the result's and the protocol's JSON.
#include "core/base/fd.hpp"
#include "core/result/result.hpp"
#include "core/sys/tcp_info.hpp"
#include "core/wire/native/protocol.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <vector>

using namespace nb;

namespace {

// A connected pair over 127.0.0.1 (port 0: the kernel picks one).
struct tcp_pair {
  fd_handle client, server;
};

tcp_pair connect_pair() {
  fd_handle listener(::socket(AF_INET, SOCK_STREAM, 0));
  REQUIRE(listener);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(listener.get(), 1) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
  tcp_pair p{fd_handle(::socket(AF_INET, SOCK_STREAM, 0)), {}};
  REQUIRE(::connect(p.client.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  p.server = fd_handle(::accept(listener.get(), nullptr, nullptr));
  REQUIRE(p.server);
  return p;
}

// struct tcp_info as Linux 3.10 (CentOS 7, the static release's oldest) fills it, and glibc declares it:
// 8 one-byte fields, then 24 u32 up to tcpi_total_retrans. `index` counts those u32 from tcpi_rto.
constexpr std::size_t old_kernel_info_size = 104;
void put_u32(std::array<std::byte, old_kernel_info_size>& info, std::size_t index, std::uint32_t v) {
  std::memcpy(info.data() + 8 + 4 * index, &v, sizeof v);
}

tcp_sample sample(std::uint64_t retrans, std::uint64_t segs, std::uint32_t rtt, std::uint32_t pmtu) {
  tcp_sample s;
  s.retransmits = retrans;
  s.segs_out = segs;
  s.rtt_us = rtt;
  s.rttvar_us = rtt / 2;
  s.pmtu = pmtu;
  s.snd_mss = pmtu - 52;
  s.cwnd_bytes = 10 * (pmtu - 52);
  return s;
}

}  // namespace

TEST_CASE("a loopback connection's TCP_INFO has its figures filled and sane", "[tcp_info]") {
  tcp_pair p = connect_pair();
  std::vector<char> data(100'000, 'x');
  REQUIRE(::send(p.client.get(), data.data(), data.size(), 0) > 0);

  std::error_code ec;
  auto s = read_tcp_sample(p.client.get(), ec);
  REQUIRE_FALSE(ec);
  REQUIRE(s);
  CHECK(s->at_ns > 0);
  REQUIRE(s->snd_mss);
  CHECK(*s->snd_mss > 500);
  REQUIRE(s->pmtu);
  CHECK(*s->pmtu >= *s->snd_mss);
  REQUIRE(s->cwnd_bytes);
  CHECK(*s->cwnd_bytes >= *s->snd_mss);  // cwnd is in bytes: segments x MSS
  CHECK(*s->cwnd_bytes % *s->snd_mss == 0);
  CHECK(s->retransmits);
  CHECK(s->rtt_us);
  CHECK(s->rttvar_us);
  // This machine's kernel is newer than 4.19: every figure is there.
  CHECK((s->pacing_rate || s->pacing_unlimited));
  CHECK(s->delivery_rate);
  CHECK(s->delivery_rate_app_limited);
  CHECK(s->busy_us);
  REQUIRE(s->bytes_sent);
  CHECK(*s->bytes_sent <= data.size());
  CHECK(s->bytes_retrans);
  CHECK_FALSE(congestion_of(p.client.get()).empty());

  CHECK(read_tcp_samples(std::vector<int>{p.client.get(), -1}).size() == 2);
  CHECK_FALSE(read_tcp_samples(std::vector<int>{-1})[0].rtt_us);
  CHECK_FALSE(read_tcp_sample(-1, ec));
  CHECK(ec);
}

TEST_CASE("an older kernel's shorter TCP_INFO leaves the later figures absent, not zero", "[tcp_info]") {
  std::array<std::byte, old_kernel_info_size> info{};
  put_u32(info, 2, 1448);         // tcpi_snd_mss
  put_u32(info, 13, 1500);        // tcpi_pmtu
  put_u32(info, 15, 850);         // tcpi_rtt
  put_u32(info, 16, 120);         // tcpi_rttvar
  put_u32(info, 17, 0x7fffffff);  // tcpi_snd_ssthresh: still in the initial slow start
  put_u32(info, 18, 10);          // tcpi_snd_cwnd, segments
  put_u32(info, 23, 7);           // tcpi_total_retrans
  tcp_sample s = tcp_sample_from(info);
  CHECK(s.snd_mss == 1448u);
  CHECK(s.pmtu == 1500u);
  CHECK(s.rtt_us == 850u);
  CHECK(s.rttvar_us == 120u);
  CHECK(s.cwnd_bytes == 14480u);
  CHECK(s.retransmits == 7u);
  CHECK_FALSE(s.ssthresh_segments);
  CHECK_FALSE(s.pacing_rate);
  CHECK_FALSE(s.pacing_unlimited);  // not filled is not "unlimited"
  CHECK_FALSE(s.delivery_rate);
  CHECK_FALSE(s.delivery_rate_app_limited);
  CHECK_FALSE(s.min_rtt_us);
  CHECK_FALSE(s.bytes_retrans);
  CHECK_FALSE(s.segs_out);
  auto j = to_json(std::vector<tcp_sample>{s});
  CHECK(j[0]["pacing_rate"].is_null());
  CHECK(j[0]["retransmits"] == 7);

  // One byte short of tcpi_total_retrans: that one is gone too.
  CHECK_FALSE(tcp_sample_from(std::span(info).first(old_kernel_info_size - 1)).retransmits);
}

TEST_CASE("streams add up: retransmits within the interval, mean RTT, smallest MSS and path MTU", "[tcp_info]") {
  auto t = summarize({sample(12, 1000, 100, 1500), sample(8, 3000, 300, 9000)},
                     {sample(10, 500, 0, 1500), sample(2, 1000, 0, 9000)});
  CHECK(t.retransmits == 8u);  // (12 - 10) + (8 - 2)
  REQUIRE(t.retransmit_percent);
  CHECK(*t.retransmit_percent == Approx(100.0 * 8 / 2500));
  CHECK(t.rtt_us == Approx(200));
  CHECK(t.rtt_max_us == 300u);
  CHECK(t.pmtu == 1500u);
  CHECK(t.snd_mss == 1448u);
  CHECK(t.cwnd_bytes == 14480u + 89480u);
  CHECK_FALSE(t.pacing_rate);                                          // nobody had one
  CHECK(summarize({sample(12, 1000, 100, 1500)}).retransmits == 12u);  // no earlier sample: since the start
  CHECK_FALSE(summarize({tcp_sample{}}).rtt_us);
}

TEST_CASE("TCP samples survive the result's JSON - null where unknown - and UDP results have none",
          "[tcp_info][result]") {
  test_result r;
  r.kind = test_kind::tcp_stream;
  r.ok = true;
  tcp_sample unknown;  // a stream whose sample failed
  r.tcp = summarize({sample(5, 100, 80, 1500), unknown});
  r.tcp->congestion = "cubic";
  r.tcp->streams[0].pacing_unlimited = true;
  interval_figures i;
  i.tcp = summarize({sample(3, 60, 90, 1500)});
  r.intervals.push_back(i);

  const auto j = to_json(r);
  CHECK(j["tcp"]["congestion"] == "cubic");
  CHECK(j["tcp"]["retransmits"] == 5);
  CHECK(j["tcp"]["streams"][1]["rtt_us"].is_null());
  CHECK(j["intervals"][0]["tcp"]["rtt_us"] == 90.0);
  CHECK_FALSE(j["intervals"][0]["tcp"].contains("congestion"));  // named once, in the result's

  auto back = result_from_json(j);
  REQUIRE(back.tcp);
  CHECK(back.tcp->congestion == "cubic");
  CHECK(back.tcp->retransmits == 5u);
  CHECK(back.tcp->rtt_us == Approx(80));
  REQUIRE(back.tcp->streams.size() == 2);
  CHECK(back.tcp->streams[0].pacing_unlimited);
  CHECK(back.tcp->streams[0].pmtu == 1500u);
  CHECK_FALSE(back.tcp->streams[1].rtt_us);
  REQUIRE(back.intervals[0].tcp);
  CHECK(back.intervals[0].tcp->retransmits == 3u);
  CHECK_FALSE(back.intervals[0].tcp->congestion);

  auto bad = j;
  bad["tcp"]["streams"][0]["rtt_us"] = "fast";
  CHECK_THROWS_WITH(result_from_json(bad), Catch::Contains("'rtt_us'"));
  bad = j;
  bad["tcp"]["streams"][0]["window"] = 1;
  CHECK_THROWS_WITH(result_from_json(bad), Catch::Contains("'window' is not a known field"));

  // A TCP result without samples says null; results from before them (no "tcp") still read.
  r.tcp.reset();
  CHECK(to_json(r)["tcp"].is_null());
  auto old = to_json(r);
  old.erase("tcp");
  CHECK_FALSE(result_from_json(old).tcp);
  r.kind = test_kind::udp_stream;
  r.intervals.clear();
  CHECK_FALSE(to_json(r).contains("tcp"));
}

TEST_CASE("the reverse sender's samples travel in interval and result messages", "[tcp_info][protocol]") {
  interval_msg i{2, 9, 10, 11};
  i.tcp = {sample(1, 10, 70, 1500)};
  message decoded = decode_payload(encode_payload(message{i}));
  REQUIRE(std::holds_alternative<interval_msg>(decoded));
  const auto& back = std::get<interval_msg>(decoded);
  REQUIRE(back.tcp.size() == 1);
  CHECK(back.tcp[0].rtt_us == 70u);

  result_msg r{side_counts{}, 0, std::nullopt, "bbr", {sample(4, 10, 70, 1500), tcp_sample{}}};
  decoded = decode_payload(encode_payload(message{r}));
  REQUIRE(std::holds_alternative<result_msg>(decoded));
  const auto& rb = std::get<result_msg>(decoded);
  CHECK(rb.congestion == "bbr");
  REQUIRE(rb.tcp.size() == 2);
  CHECK(rb.tcp[0].retransmits == 4u);
  CHECK_FALSE(rb.tcp[1].retransmits);

  // Forward and UDP messages carry none: what they always were.
  CHECK_FALSE(nlohmann::json::parse(encode_payload(message{interval_msg{2, 9, 10, 11}}))["body"].contains("tcp"));
  auto bad = nlohmann::json::parse(encode_payload(message{i}));
  bad["body"]["tcp"][0]["cwnd"] = 1;
  CHECK_THROWS_AS(decode_payload(bad.dump()), protocol_error);
}

// tcpi_total_retrans and tcpi_segs_out are __u32 in struct tcp_info. segs_out counts
// MSS-sized segments, so at 10 Gbit/s with a 1448-byte MSS it wraps about every 83 minutes (25 Gbit/s:
// 33 min). An interval across the wrap must count what was sent in it, not 0 (grown() clamps to 0, so the
// interval's retransmit_percent is missing or wildly off).
TEST_CASE("review: a 32-bit TCP_INFO counter that wrapped within the interval still grows", "[tcp_info][review]") {
  auto t = summarize({sample(5, 100, 100, 1500)}, {sample(4'294'967'290u, 4'294'967'000u, 100, 1500)});
  CHECK(t.retransmits == 11u);  // 2^32 - 4294967290 + 5
  REQUIRE(t.retransmit_percent);
  CHECK(*t.retransmit_percent == Approx(100.0 * 11 / 396));  // 2^32 - 4294967000 + 100 segments
}
