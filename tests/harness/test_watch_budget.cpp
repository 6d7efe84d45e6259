// The metrics endpoint under idle connections (issue 40, finding 9c): sixteen connections from one
// address that never send a request, re-opened as soon as they close and before any deadline could end
// them, for ten seconds, while a scraper from another address asks for /metrics every 0.3 s. Before the
// per-source budget and the head deadline they held every connection the endpoint takes (0/30 and 9/30
// scrapes succeeded); now the scraper's scrapes succeed. All on 127.0.0.x, bounded in time.
#include "harness/watch/metrics_server.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

using namespace harness::watch;
using steady = std::chrono::steady_clock;

namespace {

// A TCP connection from `from` (an IPv4 address) to `to`, connect and each read and write bounded by
// `timeout`; -1 when it could not be made.
int connect_from(const char* from, const boost::asio::ip::tcp::endpoint& to, std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const timeval tv{static_cast<time_t>(timeout.count() / 1000),
                   static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // bounds connect() too
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  ::inet_pton(AF_INET, from, &a.sin_addr);
  sockaddr_in b{};
  b.sin_family = AF_INET;
  b.sin_port = htons(to.port());
  ::inet_pton(AF_INET, to.address().to_string().c_str(), &b.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&b), sizeof b) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One scrape as Prometheus makes it, with a 1-s timeout: true when the whole exposition came back.
bool scrape(const boost::asio::ip::tcp::endpoint& at) {
  const auto until = steady::now() + std::chrono::seconds(1);
  const int fd = connect_from("127.0.0.1", at, std::chrono::milliseconds(1000));
  if (fd < 0) return false;
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text\r\n\r\n";
  std::string reply;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    std::array<char, 4096> buf;
    for (ssize_t n; steady::now() < until && (n = ::recv(fd, buf.data(), buf.size(), 0)) > 0;)
      reply.append(buf.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return reply.starts_with("HTTP/1.1 200 ") && reply.ends_with("# EOF\n");
}

// Sixteen idle connections from 127.0.0.2 until `stop`: each re-opened as soon as the server closes it,
// and every 1.5 s anyway (before a 2-s or 5-s deadline could close it). Counts the connections made.
void hold_idle(const boost::asio::ip::tcp::endpoint& at, const std::atomic<bool>& stop, std::atomic<long>& made) {
  struct held {
    int fd = -1;
    steady::time_point opened;
  };
  std::array<held, 16> conns;
  while (!stop) {
    for (auto& c : conns) {
      if (c.fd >= 0) {
        pollfd p{c.fd, POLLIN, 0};
        const bool closed = ::poll(&p, 1, 0) > 0;  // the server's FIN or RST: readable
        if (!closed && steady::now() - c.opened < std::chrono::milliseconds(1500)) continue;
        ::close(c.fd);
      }
      c.fd = connect_from("127.0.0.2", at, std::chrono::milliseconds(200));
      c.opened = steady::now();
      if (c.fd >= 0) ++made;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto& c : conns)
    if (c.fd >= 0) ::close(c.fd);
}

}  // namespace

TEST_CASE("harness watch: scrapes from one address succeed while another holds idle connections",
          "[harness][watch][budget]") {
  boost::asio::io_context io;
  metrics_server server(io, parse_listen("127.0.0.1:0"), [] { return std::string("x 1\n# EOF\n"); });
  const auto at = server.local_endpoint();
  server.start();
  std::thread serving([&] { io.run(); });
  std::atomic<bool> stop{false};
  std::atomic<long> made{0};
  std::thread attacker([&] { hold_idle(at, stop, made); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the idle connections in place first
  int ok = 0, tried = 0;
  for (const auto end = steady::now() + std::chrono::seconds(10); steady::now() < end; ++tried) {
    const auto next = steady::now() + std::chrono::milliseconds(300);
    ok += scrape(at) ? 1 : 0;
    std::this_thread::sleep_until(next);
  }
  stop = true;
  attacker.join();
  boost::asio::post(io, [&] { server.stop(); });
  serving.join();
  fmt::print(
      "metrics endpoint: {}/{} scrapes from 127.0.0.1 succeeded while 127.0.0.2 held 16 idle connections "
      "({} connections opened in 10 s)\n",
      ok, tried, made.load());
  CHECK(made > 16);  // the attack ran
  CHECK(ok * 10 >= tried * 9);
}

TEST_CASE("harness watch: an idle connection is closed at the head deadline, and a source keeps its budget",
          "[harness][watch][budget]") {
  boost::asio::io_context io;
  metrics_server server(io, parse_listen("127.0.0.1:0"), [] { return std::string("x 1\n# EOF\n"); });
  const auto at = server.local_endpoint();
  server.start();
  std::thread serving([&] { io.run(); });
  // Three idle connections from 127.0.0.1, one fewer than its budget: its scrape still gets through.
  std::array<int, 3> idle{};
  for (int& fd : idle) fd = connect_from("127.0.0.1", at, std::chrono::milliseconds(1000));
  const auto opened = steady::now();
  const bool scraped = scrape(at);
  // The idle ones are closed once the head deadline passes, not at the whole exchange's.
  pollfd p{idle[0], POLLIN, 0};
  const int ready = ::poll(&p, 1, 4000);
  const double closed_after = std::chrono::duration<double>(steady::now() - opened).count();
  for (int fd : idle) ::close(fd);
  boost::asio::post(io, [&] { server.stop(); });
  serving.join();
  fmt::print("metrics endpoint: an idle connection closed after {:.2f} s\n", closed_after);
  CHECK(scraped);
  CHECK(ready == 1);
  CHECK(closed_after < 3.0);
}

// The budget's key: one per IPv4 address, an IPv4-mapped address as that address, one per IPv6 /64.
TEST_CASE("harness watch: the connection budget counts per address, per IPv6 /64", "[harness][watch][budget]") {
  CHECK(metrics_server::source_of(boost::asio::ip::make_address("::ffff:127.0.0.2")) ==
        boost::asio::ip::make_address("127.0.0.2"));
  CHECK(metrics_server::source_of(boost::asio::ip::make_address("2001:db8:1:2:3:4:5:6")) ==
        boost::asio::ip::make_address("2001:db8:1:2::"));
}
