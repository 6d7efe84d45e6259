#pragma once
// netserve: many ports in one process, TCP and UDP on the same number. `server` binds and accepts, as in
// the Asio HTTP server example. docs/netserve.md#ports
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
  // Throws std::runtime_error naming the port that failed.
  void bind();
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
  std::int64_t refusal_logged_ns_ = 0;  // at most a line a second
  std::uint64_t refusals_unlogged_ = 0;
};

}  // namespace nb::serve
