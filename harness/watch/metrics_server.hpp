#pragma once
// `harness watch --listen ADDR:PORT`: GET /metrics over HTTP/1.1 (Boost.Beast) in the watch's io_context.
// One request per connection, bounded in time, size and number (in all and per source address), since
// anyone who can reach the port can talk to it: a few addresses holding idle connections cannot take the
// scraper's.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace harness::watch {

namespace asio = boost::asio;

// "127.0.0.1:9464", "[::1]:0", "0.0.0.0:9464": an IP address (no name: binding is no place for a
// lookup) and a port, 0 letting the kernel choose. Throws std::invalid_argument saying what is wrong.
asio::ip::tcp::endpoint parse_listen(const std::string& text);

class metrics_server {
 public:
  // Binds at once (a port in use is an error before any run starts); serves once start() is called.
  metrics_server(asio::io_context& io, const asio::ip::tcp::endpoint& at, std::function<std::string()> render);
  asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  void start();
  // Closes the listening socket and every open connection: the io_context then runs out of work.
  void stop();

  // The request head must have come within head_timeout of the accept (a scraper sends it at once); the
  // whole exchange, the answer written included, ends by request_timeout.
  static constexpr std::chrono::seconds head_timeout{2};
  static constexpr std::chrono::seconds request_timeout{5};
  // A longer head, or one of more fields, is answered 431.
  static constexpr std::size_t max_request_head = 8192;
  static constexpr std::size_t max_header_fields = 64;
  // Open connections in all, and from one source (an IPv4 address; an IPv6 /64, what one host is
  // usually given); a connection beyond either is closed as it is accepted, unread.
  static constexpr std::size_t max_connections = 64;
  static constexpr std::size_t max_connections_per_source = 4;
  // The key a connection from `peer` counts under: the address, an IPv4-mapped one as IPv4, an IPv6
  // address cut to its /64.
  static asio::ip::address source_of(const asio::ip::address& peer);

 private:
  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(asio::ip::tcp::socket s, asio::ip::address source);

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  std::function<std::string()> render_;
  std::set<asio::ip::tcp::socket*> open_;
  std::map<asio::ip::address, std::size_t> per_source_;  // open connections per source_of(peer)
  std::size_t open_count_ = 0;                           // open connections, counted from their accept
  bool stopped_ = false;
};

}  // namespace harness::watch
