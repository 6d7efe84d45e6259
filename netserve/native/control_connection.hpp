#pragma once
// One control connection, from its first frame to its test's result: the Asio HTTP server example's
// `connection`, where `server` only accepts. It owns its socket, the frames' MAC once the key check
// passed, and the test it registers: the test's slot on its port, its share of the budget and its
// threads go when the connection ends. A data connection is one whose first frame is `data`: it hands
// its socket over to its test and ends.
#include "core/policy/request_rules.hpp"
#include "core/wire/native/frame_io.hpp"
#include "netserve/server/request_checks.hpp"
#include "netserve/server/served_port.hpp"
#include "netserve/server/served_test.hpp"
#include "netserve/server/server_budget.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>

namespace nb::serve {

class control_connection {
 public:
  // `unit`: the connection's own unit of the budget, held until it ends; `window`: its place in its
  // address's first-message window, held until its first message is read.
  control_connection(tcp::socket socket, std::shared_ptr<served_port> port, std::shared_ptr<server_shared> shared,
                     budget::hold unit, per_client_count::hold window);
  ~control_connection();
  control_connection(const control_connection&) = delete;
  control_connection& operator=(const control_connection&) = delete;

  // Serves the connection to its end. Logs its own failures (and tells the client why): nothing escapes.
  asio::awaitable<void> run();

 private:
  void attach_data(const data_hello& hello);
  asio::awaitable<void> run_test(test_request request);
  void register_test(test_request request);
  asio::awaitable<void> send_ready();
  asio::awaitable<void> await_start();
  asio::awaitable<void> report_intervals(const bool& ended);
  // The wall-clock instant the client's end message came.
  asio::awaitable<std::int64_t> await_end(bool& ended);
  asio::awaitable<void> drain();
  void log_result(const result_msg& result, std::int64_t client_end_wall_ns) const;
  void tell_why(const protocol_error& e);
  // Logs why the connection ended (the first of a parallel wait's failures) and tells the client when
  // it broke the protocol.
  void on_failure(std::exception_ptr e);
  asio::awaitable<bool> refused_iperf3_without_key();

  budget::hold unit_;  // first: given back last, after the test has stopped
  std::optional<per_client_count::hold> window_;
  tcp::socket socket_;
  frame_mac mac_;  // keyed once the key check passed: every later frame, both ways, is sealed
  std::shared_ptr<served_port> port_;
  std::shared_ptr<server_shared> shared_;
  std::string peer_ = "?";  // for the log
  std::string client_;      // client_of(peer): whose share of the port and the budget the test takes
  std::optional<budget::hold> test_budget_;
  std::shared_ptr<served_test> test_;  // registered on the port from register_test to the destructor
};

}  // namespace nb::serve
