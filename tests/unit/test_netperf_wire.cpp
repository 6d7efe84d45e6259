// netperf's control messages (core/wire/netperf/netperf_wire.hpp) against blocks a stock netperf 2.7 and netserver sent
// (tests/fuzz/corpus_netperf, captured on 127.0.0.1): the layout, the byte order, the 32-bit fields.
#include "core/wire/netperf/netperf_wire.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace np = nb::netperf;

namespace {

np::block captured(const char* name) {
  std::ifstream in(std::filesystem::path(NETBENCH_FUZZ_DIR) / "corpus_netperf" / name, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  REQUIRE(bytes.size() == np::message_size);
  np::block b{};
  std::memcpy(b.data(), bytes.data(), b.size());
  return b;
}

}  // namespace

TEST_CASE("netperf wire: a netperf 2.7 UDP_STREAM request (-l 1 -- -m 1400) decodes field by field", "[netperf]") {
  const np::block b = captured("request_udp_stream.bin");
  CHECK(np::decode_header(b).type == np::type_request);
  CHECK(np::decode_header(b).value == -1);  // no -T: netserver binds to no CPU
  const np::omni_request r = np::decode_request(b);
  CHECK(r.test_length == 1);
  CHECK(r.direction == np::dir_recv);
  CHECK(r.protocol == np::ipproto_udp);
  CHECK(r.socket_type == np::nst_dgram);
  CHECK(r.ipfamily == np::nf_inet);
  CHECK(r.recv_buf_size == -1);
  CHECK(r.send_alignment == 8);
  CHECK(r.data_port == 0);
  CHECK(r.netperf_port == 0xb935);
  CHECK(r.cong_control.empty());
  // Encoding gives back the very bytes netperf sent.
  CHECK(np::encode_request(r, -1) == b);
}

TEST_CASE("netperf wire: netserver's results come with their type byte-swapped, and say 64-bit bytes", "[netperf]") {
  const np::block b = captured("results_netserver_udp.bin");
  CHECK(np::decode_header(b).type == 0x62000000);  // its setup block (98), converted in place once too often
  const np::omni_results r = np::decode_results(b);
  // netperf's own table for that run: "212992 1.00 18781 210.33" on the receiver's line.
  CHECK(r.recv_calls == 18781);
  CHECK(r.bytes_received == 18781u * 1400u);
  CHECK(r.recv_buf_size == 212992);
}

TEST_CASE("netperf wire: results are big-endian words, bytes as two of them, counts saturated to 32 bits",
          "[netperf]") {
  np::omni_results r;
  r.bytes_received = (std::uint64_t{1} << 32) + 5;
  r.recv_calls = np::field32(std::uint64_t{1} << 33);
  r.elapsed_time = 1.0f;
  const np::block b = np::encode_results(r);
  const unsigned char head[] = {0, 0, 0, 99, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff};
  CHECK(std::memcmp(b.data(), head, sizeof head) == 0);
  const unsigned char one[] = {0x3f, 0x80, 0, 0};  // the float 1.0 by its bit pattern, big-endian
  CHECK(std::memcmp(b.data() + 8 + 10 * 4, one, 4) == 0);
  CHECK(np::decode_results(b).bytes_received == r.bytes_received);
  CHECK(np::field32(41) == 41);
}

TEST_CASE("netperf wire: malformed blocks are refused, not guessed", "[netperf]") {
  np::block b = captured("request_tcp_rr.bin");
  CHECK(np::decode_request(b).request_size == 32);
  CHECK(np::decode_request(b).response_size == 1024);
  std::memset(b.data() + 8 + 152, 'x', 16);  // cong_control without its NUL
  CHECK_THROWS_AS(np::decode_request(b), nb::protocol_error);
  CHECK_THROWS_AS(np::decode_request(captured("setup_netserver_tcp.bin")), nb::protocol_error);  // not a request
  CHECK_THROWS_AS(np::decode_setup(captured("request_tcp_rr.bin")), nb::protocol_error);
}

TEST_CASE("netperf wire: a request's first bytes are told from a netload frame and an iperf3 cookie", "[netperf]") {
  const np::block b = captured("request_udp_stream.bin");
  unsigned char first[5];
  std::memcpy(first, b.data(), 5);
  CHECK(np::looks_like_request(first));
  const unsigned char pinned[5] = {0, 0, 0, 97, 0};  // -T ,0: the CPU word is 0
  CHECK(np::looks_like_request(pinned));
  const unsigned char frame[5] = {0, 0, 0, 97, '{'};  // a 97-byte netload frame
  CHECK_FALSE(np::looks_like_request(frame));
  const unsigned char big_frame[5] = {0, 1, 0, 0, '{'};
  CHECK_FALSE(np::looks_like_request(big_frame));
  const unsigned char cookie[5] = {'a', 'b', 'c', 'd', 'e'};
  CHECK_FALSE(np::looks_like_request(cookie));
}

TEST_CASE("netperf wire: netserver's setup and TCP_RR results decode field by field, and netserve's blocks encode back",
          "[netperf]") {
  const np::omni_setup setup = np::decode_setup(captured("setup_netserver_tcp.bin"));  // -- -M 500 -S 1M
  CHECK(setup.recv_buf_size == 2097152);
  CHECK(setup.receive_size == 500);
  CHECK(setup.send_size == 0xffffffffU);
  CHECK(setup.data_port == 36111);
  CHECK(setup.socket_prio == -1);
  CHECK(setup.socket_tos == -1);
  const np::omni_results rr = np::decode_results(captured("results_netserver_tcp_rr.bin"));
  CHECK(rr.bytes_received == 1021408);
  CHECK(rr.recv_calls == 31919);
  CHECK(rr.recv_buf_size == 344812);
  CHECK(rr.bytes_sent == 32685056);
  CHECK(rr.send_buf_size == 3939840);
  CHECK(rr.trans_received == 31919);
  CHECK(rr.elapsed_time == Approx(1.0005).epsilon(1e-4));
  for (const char* name :
       {"request_tcp_rr.bin", "request_udp_rr.bin", "request_tcp_maerts.bin", "request_tcp_stream_M500_S1M.bin"}) {
    INFO(name);
    const np::block b = captured(name);
    CHECK(np::encode_request(np::decode_request(b), np::decode_header(b).value) == b);
  }
  const np::block netserve_setup = captured("setup_netserve_udp.bin");
  CHECK(np::encode_setup(np::decode_setup(netserve_setup)) == netserve_setup);
  const np::block netserve_results = captured("results_netserve_udp.bin");
  CHECK(np::encode_results(np::decode_results(netserve_results)) == netserve_results);
}
