#pragma once
// One netload connection, the Asio HTTP server example's `connection`. Its test (slot, budget, threads)
// goes when it ends; a data connection hands its socket to its test.
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
  // `unit` is held to the end, `window` until the first message is read.
  control_connection(tcp::socket socket, std::shared_ptr<served_port> port, std::shared_ptr<server_shared> shared,
                     budget::hold unit, per_client_count::hold window);
  ~control_connection();
  control_connection(const control_connection&) = delete;
  control_connection& operator=(const control_connection&) = delete;

  // Logs its own failures and tells the client why: nothing escapes.
  asio::awaitable<void> run();

 private:
  void attach_data(const data_hello& hello);
  asio::awaitable<void> run_test(test_request request);
  void register_test(test_request request);
  asio::awaitable<void> send_ready();
  asio::awaitable<void> await_start();
  asio::awaitable<void> report_intervals(const bool& ended);
  // When the client's end came, wall clock.
  asio::awaitable<std::int64_t> await_end(bool& ended);
  asio::awaitable<void> drain();
  void log_result(const result_msg& result, std::int64_t client_end_wall_ns) const;
  void tell_why(const protocol_error& e);
  // A parallel wait's first failure is the cause.
  void on_failure(std::exception_ptr e);
  asio::awaitable<bool> refused_iperf3_without_key();

  budget::hold unit_;  // first: given back last, after the test has stopped
  std::optional<per_client_count::hold> window_;
  tcp::socket socket_;
  frame_mac mac_;  // keyed after the key check: every later frame is sealed
  std::shared_ptr<served_port> port_;
  std::shared_ptr<server_shared> shared_;
  std::string peer_ = "?";
  std::string client_;
  std::optional<budget::hold> test_budget_;
  std::shared_ptr<served_test> test_;  // registered on the port until the destructor
};

}  // namespace nb::serve
