#pragma once
// A stock iperf3 client's test on netserve's ports and data plane: iperf3's control protocol drives one
// served_test, two with --bidir. docs/serving-stock-clients.md#iperf3
#include "core/wire/iperf3/iperf3_wire.hpp"
#include "netserve/server/served_port.hpp"
#include "netserve/server/served_test.hpp"
#include "netserve/server/server_budget.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nb::serve {

// Reads the cookie, then runs a session or hands the socket to one as a stream. `window` goes once the
// cookie is read. Logs its own failures; nothing escapes.
asio::awaitable<void> serve_iperf3(tcp::socket socket, std::shared_ptr<served_port> port,
                                   std::shared_ptr<server_shared> shared, budget::hold unit,
                                   std::optional<per_client_count::hold> window);

class iperf3_session {
 public:
  iperf3_session(tcp::socket socket, std::string cookie, std::shared_ptr<served_port> port,
                 std::shared_ptr<server_shared> shared, budget::hold unit);
  ~iperf3_session();
  iperf3_session(const iperf3_session&) = delete;
  iperf3_session& operator=(const iperf3_session&) = delete;

  asio::awaitable<void> run();
  // std::nullopt when a test took it; else the caller refuses it with ACCESS_DENIED, as iperf3 does.
  [[nodiscard]] attach_refusal attach_stream(tcp::socket& socket);

 private:
  struct refusal {
    iperf3::state state;
    iperf3::error code;
    std::string why;  // for the log
  };
  std::optional<refusal> check(const iperf3::params& p) const;
  std::optional<refusal> plan_tests();
  std::optional<refusal> register_tests();
  asio::awaitable<std::optional<refusal>> set_up_streams();
  asio::awaitable<void> create_streams();
  asio::awaitable<void> collect_hellos();
  asio::awaitable<bool> await_test_end();
  asio::awaitable<void> settle();
  asio::awaitable<void> exchange_results(double seconds);
  std::string result_line(std::size_t k, double seconds) const;
  asio::awaitable<void> send_state(iperf3::state s);
  asio::awaitable<void> refuse(const refusal& r);
  asio::awaitable<std::string> read_json(const char* what);

  budget::hold unit_;  // first: given back last
  tcp::socket socket_;
  std::string cookie_;
  std::shared_ptr<served_port> port_;
  std::shared_ptr<server_shared> shared_;
  std::string peer_ = "?";
  std::string client_;
  iperf3::params params_;
  std::vector<test_request> requests_;  // the client's sending streams' test first
  std::vector<std::optional<budget::hold>> budgets_;
  std::vector<std::shared_ptr<served_test>> tests_;  // in requests_' order
  std::vector<std::vector<flow_totals>> totals_;     // at the end
  std::vector<side_counts> counts_;
  double cpu_user_s_ = 0, cpu_system_s_ = 0;  // the process's, during the test
  bool accepting_streams_ = false;
};

}  // namespace nb::serve
