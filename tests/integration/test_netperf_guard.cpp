// A hostile netperf peer against netserve, in netperf's own protocol (tests/integration/raw_netperf.hpp), no
// stock netperf needed: the whole exchange has a deadline no message moves, one address holds a share of
// netperf control connections and the next address still gets its test, a flood of unknown messages
// writes a bounded log, and nothing netserve sends lands on its own netperf data sockets or comes back
// larger than the request entitles. Each prints the figure it checks.
#include "core/wire/native/protocol.hpp"
#include "tests/integration/netserve_fixture.hpp"
#include "tests/integration/raw_netperf.hpp"
#include "tests/integration/raw_protocol.hpp"

#include <fmt/format.h>

#include <poll.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <map>
#include <string>
#include <vector>

using namespace nb::test;

namespace netperf_guard {

double seconds_since(std::int64_t began) { return static_cast<double>(nb::mono_ns() - began) / 1e9; }

// A native test registered from 127.0.0.1: its control connection, or -1 with the server's reason in `why`.
int register_native(std::uint16_t port, const nb::test_request& r, std::string& why) {
  int c = connect_from("127.0.0.1", port);
  send_message(c, nb::message{r});
  why = refusal(read_message(c));
  if (why.empty()) return c;
  ::close(c);
  return -1;
}

// A reverse UDP stream of 1-byte datagrams at `pps` towards 127.0.0.1:`data_port`, from netserve's port.
nb::test_request reverse_stream(std::uint16_t data_port, double seconds, double pps) {
  nb::test_request r = udp_request(seconds);
  r.reverse = true;
  r.pps = pps;
  r.message_size = 1;
  r.data_ports = {data_port};
  return r;
}

// Starts a registered native test now and, after `run_ms`, ends it.
void run_native(int control, int run_ms) {
  send_message(control, nb::message{nb::start_msg{nb::wall_ns() + 100'000'000}});
  ::usleep(static_cast<useconds_t>(run_ms) * 1000);
  send_message(control, nb::message{nb::end_msg{}});
  for (int i = 0; i < 100; ++i) {
    auto m = read_message(control, 15);
    if (!m || std::holds_alternative<nb::result_msg>(*m)) break;
  }
}

// Ends a netperf UDP test on `data_port` (a zero-length datagram) and reads its results.
std::optional<np::omni_results> end_netperf_udp(int control, std::uint16_t data_port) {
  const int data = udp_socket_on_loopback();
  send_datagram(data, data_port, 0);
  ::close(data);
  auto b = read_block(control, 15'000);
  if (!b || np::decode_header(*b).type != np::type_results) return std::nullopt;
  return np::decode_results(*b);
}

std::size_t answers_within(int fd, int ms, std::uint64_t& bytes) {
  std::size_t n = 0;
  std::vector<char> buf(70'000);
  const std::int64_t until = nb::mono_ns() + std::int64_t{ms} * 1'000'000;
  for (int left; (left = static_cast<int>((until - nb::mono_ns()) / 1'000'000)) > 0;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left) <= 0) break;
    for (ssize_t got; (got = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT)) >= 0; ++n) bytes += got;
  }
  return n;
}

// netserve's log, once it holds `text` (or after 3 s).
std::string log_with(netserve_process& server, const std::string& text) {
  for (int i = 0; i < 300 && server.log().find(text) == std::string::npos; ++i) ::usleep(10'000);
  return server.log();
}

// Whether `fd` is still open and silent: nothing to read, no hang-up.
bool held_open(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

}  // namespace netperf_guard

using namespace netperf_guard;

TEST_CASE("netperf: a control connection that sends a message every second is closed by the exchange's deadline",
          "[integration][netperf]") {
  // --netperf-idle-max: the deadline's 30 s default, shortened so the test takes seconds.
  netserve_process server(1, {"--netperf-idle-max", "2.5"});
  const int c = connect_to(server.port());
  const std::int64_t began = nb::mono_ns();
  REQUIRE(send_block(c, netperf_block(np::type_passphrase)));
  int sent = 1;
  bool closed = false;
  while (!closed && seconds_since(began) < 8) {
    closed = closed_within(c, 1000);
    if (!closed && send_block(c, netperf_block(5))) ++sent;  // -t REM_CPU: refused with 998, as netserver does
  }
  const double open_s = seconds_since(began);
  ::close(c);
  fmt::print("a netperf message every second ({} sent): connection {} after {:.1f} s\n", sent,
             closed ? "closed" : "still open", open_s);
  CHECK(closed);
  CHECK(open_s > 2.0);
  CHECK(open_s < 4.0);
  CHECK_THAT(log_with(server, "closed: timed out"),
             Catch::Contains("netperf connection from 127.0.0.1 closed: timed out") &&
                 Catch::Contains("the exchange may spend 2.5 s outside its tests, in all"));
}

TEST_CASE("netperf: 130 control connections from each of four addresses hold a share, and a test from 127.0.0.1 runs",
          "[integration][netperf]") {
  netserve_process server(1);
  std::map<std::string, std::vector<int>> attack;
  for (const char* from : {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"})
    for (int i = 0; i < 130; ++i) {
      const int fd = connect_to(server.port(), from);
      send_block(fd, netperf_block(np::type_passphrase));  // identified as netperf, then silent
      attack[from].push_back(fd);
    }
  ::usleep(1'000'000);
  std::map<std::string, long> held;
  std::string figures;
  for (const auto& [from, fds] : attack) {
    held[from] = std::count_if(fds.begin(), fds.end(), held_open);
    figures += fmt::format("{}{} from {}", figures.empty() ? "" : ", ", held[from], from);
  }
  const netperf_outcome legit = udp_stream_exchange(server.port(), "127.0.0.1", 100);
  fmt::print("netperf connections held after 1 s: {}; netperf UDP_STREAM from 127.0.0.1: {}\n", figures,
             legit.ok ? fmt::format("ran, {} bytes counted", legit.bytes_received) : legit.why);
  for (const auto& [from, fds] : attack)
    for (int fd : fds) ::close(fd);
  for (const auto& [from, n] : held) {
    INFO(from);
    CHECK(n <= 16);  // --max-tests-per-port 64 x --client-share 0.25
  }
  CHECK(legit.ok);
  CHECK(legit.bytes_received == 100 * 100);
}

TEST_CASE("netperf: 50 000 unknown messages write a bounded log, and netperf still runs", "[integration][netperf]") {
  netserve_process server(1);
  const std::size_t log_before = server.log().size();
  // Five at a time, each answered (998) before the next five go: every message reaches netserve's handling.
  std::string window;
  for (int i = 0; i < 5; ++i) {
    const np::block b = netperf_block(5000);
    window.append(b.begin(), b.end());
  }
  std::uint64_t sent = 0, connections = 0;
  const std::int64_t began = nb::mono_ns();
  while (sent < 50'000 && seconds_since(began) < 30) {
    const int fd = connect_to(server.port(), "127.0.0.6");
    ++connections;
    for (bool open = true; open && sent < 50'000 && seconds_since(began) < 30;) {
      if (::send(fd, window.data(), window.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(window.size())) break;
      sent += 5;
      for (int answered = 0; open && answered < 5; ++answered) open = read_block(fd, 2000).has_value();
      server.log();  // netserve's stderr read on: a full pipe would stall it
    }
    ::close(fd);
  }
  const double took = seconds_since(began);
  ::usleep(300'000);
  const std::string grown = server.log().substr(log_before);
  const auto lines = std::count(grown.begin(), grown.end(), '\n');
  fmt::print("{} unknown netperf messages on {} connections in {:.1f} s: netserve's log grew by {} bytes, {} lines\n",
             sent, connections, took, grown.size(), lines);
  CHECK(sent >= 50'000);
  // 20 lines at once, then one a second (netserve/server/log_limiter.hpp), about 200 bytes each.
  CHECK(static_cast<double>(lines) <= 21 + took + 1);
  CHECK(static_cast<double>(grown.size()) <= (21 + took + 1) * 256);
  const netperf_outcome legit = udp_stream_exchange(server.port(), "127.0.0.1", 10);
  INFO(legit.why);
  CHECK(legit.ok);
}

TEST_CASE("netperf: a reverse stream aimed at netserve's netperf UDP_RR socket is refused, nothing reflected",
          "[integration][netperf][self]") {
  netserve_process server(1);
  const int control = connect_to(server.port());
  const netperf_setup rr = request_test(control, netperf_request(true, true, 5, 1, 65000));  // -r 1,65000
  REQUIRE(rr.errno_value == 0);
  std::string why;
  const int reverse = register_native(server.port(), reverse_stream(rr.data_port, 1, 4000), why);
  if (reverse >= 0) run_native(reverse, 1200);  // accepted: what it does
  const auto results = end_netperf_udp(control, rr.data_port);
  ::close(control);
  if (reverse >= 0) ::close(reverse);
  REQUIRE(results);
  fmt::print("reverse stream at netperf UDP_RR port {}: {}; the UDP_RR socket answered {} datagrams, {} bytes\n",
             rr.data_port, why.empty() ? "accepted" : why, results->send_calls, results->bytes_sent);
  CHECK_THAT(why,
             Catch::Contains(fmt::format("data port {} on 127.0.0.1 is one of netserve's own sockets", rr.data_port)));
  CHECK(results->bytes_sent == 0);
}

TEST_CASE("netperf: a data port a running stream is aimed at is refused to netperf (EADDRINUSE)",
          "[integration][netperf][self]") {
  netserve_process server(1);
  const int probe = udp_socket_on_loopback();  // a free port, for the stream to aim at
  const std::uint16_t free_port = nb::endpoint::local_of(probe).port();
  ::close(probe);
  std::string why;
  const int reverse = register_native(server.port(), reverse_stream(free_port, 3, 1000), why);
  REQUIRE(reverse >= 0);
  send_message(reverse, nb::message{nb::start_msg{nb::wall_ns()}});
  ::usleep(300'000);
  const int control = connect_to(server.port());
  np::omni_request r = netperf_request(true, true, 2, 1, 1000);
  r.data_port = free_port;  // netperf -- -P ,PORT
  const netperf_setup rr = request_test(control, r);
  std::uint64_t reflected = 0;
  if (rr.errno_value == 0) {  // served: the stream lands on it, and it answers
    ::usleep(1'000'000);
    if (auto results = end_netperf_udp(control, rr.data_port)) reflected = results->bytes_sent;
  }
  ::close(control);
  ::close(reverse);
  fmt::print("netperf UDP_RR on port {}, where a reverse stream goes: errno {}; {} bytes answered\n", free_port,
             rr.errno_value, reflected);
  CHECK(rr.errno_value == EADDRINUSE);
  CHECK(reflected == 0);
}

TEST_CASE("netperf UDP_RR: a request gathered from short datagrams gets one answer, as netserver gives",
          "[integration][netperf][self]") {
  netserve_process server(1);
  const int control = connect_to(server.port());
  const netperf_setup rr = request_test(control, netperf_request(true, true, 5, 100, 1000));  // -r 100,1000
  REQUIRE(rr.errno_value == 0);
  const int data = udp_socket_on_loopback();
  for (int i = 0; i < 100; ++i) send_datagram(data, rr.data_port, 1);
  std::uint64_t short_bytes = 0, whole_bytes = 0;
  const std::size_t to_short = answers_within(data, 500, short_bytes);
  send_datagram(data, rr.data_port, 100);  // a whole request, as netperf sends it
  const std::size_t to_whole = answers_within(data, 500, whole_bytes);
  ::close(data);
  const auto results = end_netperf_udp(control, rr.data_port);
  ::close(control);
  fmt::print("UDP_RR -r 100,1000: 100 one-byte datagrams got {} answers ({} bytes); one 100-byte request got {}\n",
             to_short, short_bytes, to_whole);
  CHECK(to_short == 1);
  CHECK(short_bytes == 1000);
  CHECK(to_whole == 1);
  REQUIRE(results);
  CHECK(results->trans_received == 2);
  CHECK(results->bytes_sent == 2000);
}
