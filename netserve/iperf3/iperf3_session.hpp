#pragma once
// A stock iperf3 client's test, served on netserve's own ports with netserve's data plane: iperf3's control
// protocol (core/wire/iperf3/iperf3_wire.hpp) drives one or two served_tests (two with --bidir: the client's sending
// streams, then its receiving ones), which count as a netload client's do and are logged with the same
// line. Several iperf3 clients run at once on one port, each its own test; the port's limits and the
// process budget apply to them as to netload's.
//
// A connection is iperf3's when its first byte is not 0 (netload's frames start with a length of at most
// 64 KiB): it sends its 37-byte cookie first. A cookie of a session on the port makes it one of that
// session's TCP data streams, or is refused while the session takes none (a cookie names one session from
// its first read to its end: a second session under it would take no slot of its own on the port); any
// other starts a session. UDP streams announce themselves with a 4-byte hello on the port
// (udp_port::expect_hellos), answered from the port: a session collects its client's hellos while no other
// session of the same client address on the port collects its own, so each hello has one owner.
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

// Serves an iperf3 connection whose first byte has arrived: reads its cookie, then runs a session or
// hands the socket to one as a data stream. `window`: the connection's place in its address's
// first-message window, given back once the cookie is read. Logs its own failures; nothing escapes.
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
  // A TCP data connection presenting this session's cookie: std::nullopt when a test took it, else why it
  // has no place (then the caller refuses it as iperf3 does, with ACCESS_DENIED).
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
  std::vector<test_request> requests_;  // the client's sending streams' test first (--bidir: then its receiving ones')
  std::vector<std::optional<budget::hold>> budgets_;
  std::vector<std::shared_ptr<served_test>> tests_;  // registered on the port, in requests_' order
  std::vector<std::vector<flow_totals>> totals_;     // each test's streams at the end
  std::vector<side_counts> counts_;
  double cpu_user_s_ = 0, cpu_system_s_ = 0;  // this process's, during the test
  bool accepting_streams_ = false;
};

}  // namespace nb::serve
