#pragma once
// netserve: many ports in one process. On each port a TCP acceptor takes control connections and TCP
// data connections, and a UDP socket takes datagrams, all on the same port number, so a firewall rule
// that opens a port range for TCP and UDP is all a test needs.
//
// As in the Asio HTTP server example: `server` binds the ports and accepts; each connection is served by
// a control_connection (netserve/native/control_connection.hpp); the tests live on their port, where data
// connections find them (the example's connection_manager).
#include "netserve/server/served_port.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nb::serve {

class server {
 public:
  server(asio::io_context& io, server_options options);
  // Binds every port; throws std::runtime_error naming the port that failed.
  void bind();
  // {"event":"ready",...}: one line, printed once every port is bound.
  std::string ready_line() const;
  void start();
  void stop();

 private:
  void bind_port(served_port& p, std::uint16_t wanted);
  asio::awaitable<void> accept_loop(std::shared_ptr<served_port> p);
  void log_refused_connection(const std::string& client, const std::string& why);

  asio::io_context& io_;
  std::shared_ptr<server_shared> shared_;
  std::vector<std::shared_ptr<served_port>> ports_;
  std::int64_t refusal_logged_ns_ = 0;  // connections refused are logged at most once a second
  std::uint64_t refusals_unlogged_ = 0;
};

}  // namespace nb::serve
