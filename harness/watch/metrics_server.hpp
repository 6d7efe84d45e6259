#pragma once
// `harness watch --listen ADDR:PORT`: a small HTTP/1.1 server in the watch's own io_context, answering
// GET /metrics with the OpenMetrics text of the last completed run (404 for another path, 405 for another
// method). One request per connection (Connection: close); every connection bounded in time and size, and
// in number, since anyone who can reach the port can talk to it.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <functional>
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

  static constexpr std::chrono::seconds request_timeout{5};
  static constexpr std::size_t max_connections = 16;

 private:
  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(asio::ip::tcp::socket s);
  asio::awaitable<void> exchange(asio::ip::tcp::socket& s);

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  std::function<std::string()> render_;
  std::set<asio::ip::tcp::socket*> open_;
  bool stopped_ = false;
};

}  // namespace harness::watch
