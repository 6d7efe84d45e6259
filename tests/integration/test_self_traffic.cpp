// What netserve sends cannot come back into it or be steered by the client: a test whose data peer is one
// of netserve's own sockets is refused (the self-sustaining answer loop), requests are answered only
// within the test's window and each at most once, and the log carries netserve's own figures, not those
// of the client's end message. (Fragmentation needs a path MTU below 64 KiB: tests/lab/lab_df.sh.)
#include "core/base/clock.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/flow.hpp"
#include "core/wire/native/protocol.hpp"
#include "tests/integration/netserve_fixture.hpp"
#include "tests/integration/raw_protocol.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

using nb::test::connect_from;
using nb::test::netserve_process;
using nb::test::read_message;
using nb::test::refusal;
using nb::test::send_message;

namespace {

// Registers `r` from 127.0.0.1: the control connection, or -1 with the server's reason in `why`.
int register_from_loopback(std::uint16_t port, const nb::test_request& r, std::string& why) {
  int c = connect_from("127.0.0.1", port);
  send_message(c, nb::message{r});
  why = refusal(read_message(c));
  if (why.empty()) return c;
  ::close(c);
  return -1;
}

nb::test_request rr_request(std::uint16_t data_port, std::uint32_t request, std::uint32_t response, double seconds) {
  nb::test_request r;
  r.kind = nb::test_kind::udp_rr;
  r.message_size = request;
  r.response_size = response;
  r.duration_s = seconds;
  r.data_ports = {data_port};
  r.client_version = "raw";
  return r;
}

void start_at(int control, std::int64_t wall) { send_message(control, nb::message{nb::start_msg{wall}}); }

// The client's end (with whatever counts it claims) and the server's result.
nb::result_msg end_test(int control, const nb::side_counts& claimed = {}) {
  send_message(control, nb::message{nb::end_msg{claimed}});
  for (;;) {
    auto m = read_message(control, 15);
    REQUIRE(m);
    if (auto* r = std::get_if<nb::result_msg>(&*m)) return *r;
    REQUIRE(std::holds_alternative<nb::interval_msg>(*m));
  }
}

// CPU time the process has used so far, seconds (utime + stime).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));  // past "pid (comm) "
  std::string field;
  for (int i = 3; i <= 13; ++i) rest >> field;
  unsigned long long utime = 0, stime = 0;
  rest >> utime >> stime;
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// A client's UDP socket on 127.0.0.1, connected to netserve's port.
nb::fd_handle data_socket(std::uint16_t server_port) {
  return nb::connect_udp(nb::endpoint::from_numeric("127.0.0.1", server_port),
                         nb::endpoint::from_numeric("127.0.0.1", 0));
}

std::uint16_t port_of(const nb::fd_handle& fd) { return nb::endpoint::local_of(fd.get()).port(); }

// A request of `size` bytes carrying number `n` and a send time, as netload writes one.
void send_request(int fd, std::size_t size, std::uint64_t n) {
  std::vector<unsigned char> p(size, 0);
  nb::write_payload_header(p.data(), n, nb::wall_ns());
  REQUIRE(::send(fd, p.data(), p.size(), 0) == static_cast<ssize_t>(size));
}

std::size_t answers_within(int fd, int wait_ms) {
  std::size_t n = 0;
  unsigned char buf[2048];
  const std::int64_t until = nb::mono_ns() + std::int64_t{wait_ms} * 1'000'000;
  for (int left; (left = static_cast<int>((until - nb::mono_ns()) / 1'000'000)) > 0;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left) <= 0) break;
    while (::recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) ++n;
  }
  return n;
}

// The log line of test `id`, once netserve has written it.
std::string log_line_of(netserve_process& server, std::uint64_t id) {
  const std::regex line("netserve: port \\d+ test " + std::to_string(id) + " [^\n]*");
  std::smatch m;
  for (int i = 0; i < 300; ++i) {
    const std::string log = server.log();
    if (std::regex_search(log, m, line)) return m.str();
    ::usleep(10'000);
  }
  FAIL("no log line for test " << id << ": " << server.log());
  return {};
}

double logged(const std::string& line, const std::string& key) {
  std::smatch m;
  REQUIRE(std::regex_search(line, m, std::regex(" " + key + "=([0-9.e+]+)")));
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE(
    "the answer loop: a test whose data peer is netserve's own socket is refused, CPU and answers stay at the kick",
    "[integration][self]") {
  netserve_process server(2);
  const std::uint16_t p = server.port(0), q = server.port(1);
  // The attack: a UDP_RR test whose data port is netserve's own port, then a reverse stream to that port
  // from that port: each reverse datagram is a request from the UDP_RR test's source, and so is each answer.
  std::string why_rr, why_reverse, why_other;
  int rr = register_from_loopback(p, rr_request(p, 1, 1, 30), why_rr);
  nb::test_request kick = nb::test::udp_request(0.5);
  kick.reverse = true;
  kick.pps = 100;
  kick.message_size = 1;
  kick.data_ports = {p};
  int reverse = register_from_loopback(p, kick, why_reverse);
  // Between two of its ports: P answers Q and Q answers P.
  int other = register_from_loopback(p, rr_request(q, 1, 1, 30), why_other);
  const double cpu_before = cpu_seconds(server.pid());
  const std::int64_t at = nb::wall_ns() + 200'000'000;
  for (int c : {rr, reverse, other})
    if (c >= 0) start_at(c, at);
  ::usleep(2'500'000);  // the 50-datagram kick, then 2 s in which a loop would run on
  const double cpu = cpu_seconds(server.pid()) - cpu_before;
  std::uint64_t answers = 0;
  if (rr >= 0) answers = end_test(rr).counts.responses;
  for (int c : {rr, reverse, other})
    if (c >= 0) ::close(c);
  INFO("netserve used " << cpu << " s of CPU in 2.5 s; " << answers << " answers");
  CHECK(answers <= 50);
  CHECK(cpu < 0.5);
  CHECK_THAT(why_rr,
             Catch::Contains("data port " + std::to_string(p) + " on 127.0.0.1 is one of netserve's own sockets"));
  CHECK_THAT(why_reverse, Catch::Contains("is one of netserve's own sockets"));
  CHECK_THAT(why_other,
             Catch::Contains("data port " + std::to_string(q) + " on 127.0.0.1 is one of netserve's own sockets"));
}

TEST_CASE("UDP_RR: no answer before the start instant, one per request number, none to another size",
          "[integration][self]") {
  netserve_process server(1);
  nb::fd_handle data = data_socket(server.port());
  std::string why;
  int c = register_from_loopback(server.port(), rr_request(port_of(data), 16, 16, 1), why);
  REQUIRE(c >= 0);
  start_at(c, nb::wall_ns() + 1'500'000'000);
  for (std::uint64_t n = 0; n < 20; ++n) send_request(data.get(), 16, n);  // registered, ready, not started
  CHECK(answers_within(data.get(), 1000) == 0);
  ::usleep(700'000);  // past the start instant
  send_request(data.get(), 16, 20);
  CHECK(answers_within(data.get(), 500) == 1);
  send_request(data.get(), 16, 20);  // the same request again
  send_request(data.get(), 64, 21);  // not the test's request size
  CHECK(answers_within(data.get(), 300) == 0);
  const nb::result_msg result = end_test(c);
  ::close(c);
  CHECK(result.counts.packets == 23);  // every request is counted as received
  CHECK(result.counts.responses == 1);
  const std::string line = log_line_of(server, 1);
  INFO(line);
  CHECK(logged(line, "unanswered") == 22);
}

TEST_CASE("the log carries netserve's own figures, not a forged end message's", "[integration][self]") {
  netserve_process server(1);
  nb::fd_handle data = data_socket(server.port());
  std::string why;
  nb::test_request r = nb::test::udp_request(0.5);
  r.data_ports = {port_of(data)};
  int c = register_from_loopback(server.port(), r, why);
  REQUIRE(c >= 0);
  start_at(c, nb::wall_ns() + 100'000'000);
  ::usleep(150'000);
  for (std::uint64_t n = 0; n < 100; ++n) send_request(data.get(), 100, n);
  ::usleep(400'000);
  nb::side_counts forged;
  forged.elapsed_ns = 62;  // "sent for 62 ns": 1.6e12 packets per second in the old log
  forged.packets = 100'000'000'000'000ULL;
  forged.error = "forged\nnetserve: port 1 test 99 received packets=1";
  const nb::result_msg result = end_test(c, forged);
  ::close(c);
  CHECK(result.counts.packets == 100);
  const std::string line = log_line_of(server, 1);
  INFO(line);
  CHECK(logged(line, "seconds") >= 0.3);  // from the start instant to the end message, on netserve's clock
  CHECK(logged(line, "pps") <= 100 / 0.3);
  CHECK(server.log().find("test 99") == std::string::npos);
}
