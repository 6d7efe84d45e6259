// What a user sees: the netperf table, JSON lines, start instants, and clear errors.
#include "core/base/clock.hpp"
#include "core/sys/socket.hpp"
#include "tests/integration/netserve_fixture.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <sstream>

using nb::test::netload_argv;
using nb::test::netserve_process;
using nlohmann::json;

TEST_CASE("the seed command prints netperf's two-line table plus packets per second", "[integration][output]") {
  netserve_process server(1);
  // netload -H 127.0.0.1 -p PORT -t UDP_STREAM -l 3 -- -m 1, as the procedure has it (paced for CI).
  auto c = nb::test::run(netload_argv(server.port(), "UDP_STREAM", 1, {"--pps", "20000"}, {"-m", "1"}));
  INFO(c.err);
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  CHECK_THAT(c.out, Catch::Contains("Socket  Message  Elapsed      Messages"));
  CHECK_THAT(c.out, Catch::Contains("bytes   bytes    secs            #      #   10^6bits/sec"));
  CHECK_THAT(c.out, Catch::Contains("Packets/s   sender"));
  CHECK_THAT(c.out, Catch::Contains("receiver"));
  CHECK_THAT(c.out, Catch::Contains("Loss"));
  // Sender line: buffer, size 1, time, count, errors, throughput; receiver line: buffer, time, count, throughput.
  std::istringstream lines(c.out);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(f), {}};
    if ((w.size() == 6 && w[1] == "1") || (w.size() == 4 && rows == 1)) ++rows;
  }
  CHECK(rows == 2);
}

TEST_CASE("json-stream mode prints intervals then the result", "[integration][output]") {
  netserve_process server(1);
  auto c = nb::test::run(netload_argv(server.port(), "UDP_STREAM", 2,
                                      {"--json-stream", "--interval", "0.5", "--pps", "20000"}, {"-m", "64"}));
  INFO(c.err);
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  std::istringstream lines(c.out);
  std::string line;
  std::vector<json> events;
  while (std::getline(lines, line)) events.push_back(json::parse(line));
  REQUIRE(events.size() == 5);
  std::uint64_t sent = 0, received = 0;
  for (int i = 0; i < 4; ++i) {
    CHECK(events[i]["type"] == "interval");
    CHECK(events[i]["index"] == i);
    CHECK(events[i]["complete"] == true);
    CHECK(events[i]["sent_packets"].get<std::uint64_t>() > 0);
    sent += events[i]["sent_packets"].get<std::uint64_t>();
    received += events[i]["received_packets"].get<std::uint64_t>();
  }
  const json& r = events[4];
  CHECK(r["type"] == "result");
  // Interval sums cover the test; the last datagrams may land after the last boundary.
  CHECK(sent == r["sender"]["packets"].get<std::uint64_t>());
  CHECK(received <= r["receiver"]["packets"].get<std::uint64_t>());
  CHECK(r["intervals"].size() == 4);
}

TEST_CASE("start-at waits for the instant and reports when it started", "[integration][output]") {
  netserve_process server(1);
  double at = static_cast<double>(nb::wall_ns()) / 1e9 + 1.0;
  auto c = nb::test::run(netload_argv(server.port(), "UDP_STREAM", 1,
                                      {"--json", "--pps", "10000", "--start-at", std::to_string(at)}, {"-m", "16"}));
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  json r = json::parse(c.out);
  CHECK(r["requested_start"].get<double>() == Approx(at).margin(1e-3));
  CHECK(r["actual_start"].get<double>() >= at - 1e-3);
  CHECK(r["actual_start"].get<double>() - at < 0.25);  // loose: CI is loaded; the harness measures skew
}

TEST_CASE("netload errors are one clear line with a non-zero status", "[integration][errors]") {
  SECTION("a netperf option netload does not support") {
    auto c = nb::test::run({nb::test::netload_path(), "-H", "127.0.0.1", "-b", "4", "-t", "UDP_STREAM"});
    CHECK(c.status == 2);
    CHECK_THAT(c.err, Catch::Contains("netperf option -b (burst size) is not supported"));
  }
  SECTION("a test-specific option netload does not support") {
    auto c = nb::test::run({nb::test::netload_path(), "-t", "UDP_STREAM", "--", "-P", "5000"});
    CHECK(c.status == 2);
    CHECK_THAT(c.err, Catch::Contains("-P"));
  }
  SECTION("an unknown test") {
    auto c = nb::test::run({nb::test::netload_path(), "-t", "SCTP_STREAM"});
    CHECK(c.status == 2);
    CHECK_THAT(c.err, Catch::Contains("SCTP_STREAM"));
  }
  SECTION("nobody listening") {
    netserve_process server(1);
    auto port = server.port();
    server.stop();
    auto c = nb::test::run(netload_argv(port, "UDP_STREAM", 1, {}, {"-m", "1"}));
    CHECK(c.status == 1);
    CHECK_THAT(c.err, Catch::Contains("Connection refused"));
  }
  SECTION("a listener that is not netserve: --connect-timeout bounds the connection and the handshake") {
    // Accepted by the kernel (the backlog), and never a word back.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    const auto started = std::chrono::steady_clock::now();
    auto c = nb::test::run(netload_argv(ntohs(a.sin_port), "UDP_STREAM", 1, {"--connect-timeout", "1"}, {"-m", "1"}));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ::close(fd);
    CHECK(c.status == 1);
    CHECK_THAT(c.err, Catch::Contains("accepted the connection but did not answer within --connect-timeout 1 s"));
    CHECK(took < 3);  // not the protocol's 10 s
  }
  SECTION("a test the server refuses") {
    netserve_process server(1, {"--max-duration", "1"});
    auto c = nb::test::run(netload_argv(server.port(), "UDP_STREAM", 5, {}, {"-m", "1"}));
    CHECK(c.status == 1);
    CHECK_THAT(c.err, Catch::Contains("rejected: duration"));
  }
}

TEST_CASE("netserve refuses a port another socket holds - even a SO_REUSEPORT group it could join",
          "[integration][errors]") {
  // Held by a plain socket, and by a socket of this very user with SO_REUSEPORT, whose group netserve's
  // lanes (SO_REUSEPORT themselves) would otherwise join and then lose datagrams to.
  for (bool reuse : {false, true}) {
    auto held = nb::bind_udp(nb::endpoint::from_numeric("127.0.0.1", 0), reuse);
    auto port = std::to_string(nb::endpoint::local_of(held.get()).port());
    auto c = nb::test::run({nb::test::netserve_path(), "--bind", "127.0.0.1", "-p", port, "--rx-threads", "1"});
    INFO("reuse " << reuse << ": " << c.err);
    CHECK(c.status == 1);
    CHECK_THAT(c.err, Catch::Contains("cannot bind UDP port " + port));
    if (nb::allowed_cpus().size() >= 2) {
      c = nb::test::run({nb::test::netserve_path(), "--bind", "127.0.0.1", "-p", port, "--rx-threads", "2"});
      CHECK(c.status == 1);
      CHECK_THAT(c.err, Catch::Contains("cannot bind UDP port " + port));
    }
  }
}

TEST_CASE("the table's remote socket size is what netserve's data socket got, never 0", "[integration][output]") {
  netserve_process server(1);
  // netperf's columns: TCP "Recv Socket Size" is the remote's (-S), "Send Socket Size" the local's (-s);
  // in reverse the server sends. Forward UDP's receiver line was already the port's buffer.
  struct direction {
    const char* test;
    bool reverse;
  };
  for (auto d : {direction{"TCP_STREAM", false}, direction{"TCP_STREAM", true}, direction{"UDP_STREAM", true}}) {
    std::vector<std::string> global{"--json", "--pps", "2000"};
    if (d.reverse) global.push_back("--reverse");
    auto c = nb::test::run(netload_argv(server.port(), d.test, 0.5, global, {"-m", "1000", "-S", "256K"}));
    INFO(d.test << (d.reverse ? " reverse" : "") << ": " << c.err);
    REQUIRE(nb::test::ran_and_reconciled(c.status));
    json r = json::parse(c.out);
    const json& remote = d.reverse ? r["sender"] : r["receiver"];
    const json& local = d.reverse ? r["receiver"] : r["sender"];
    CHECK(remote["socket_buffer"].get<int>() > 0);
    CHECK(local["socket_buffer"].get<int>() > 0);
    if (std::string(d.test) == "TCP_STREAM")
      CHECK(remote["socket_buffer"].get<int>() >= 256 * 1024);  // -S asked for it
  }
}
