#pragma once
// netload --peer iperf3: one test against a running stock `iperf3 -s`, speaking iperf3's client protocol
// (core/wire/iperf3/iperf3_wire.hpp) on the control connection and moving the data with netload's own data plane
// (senders, pacer, receivers). iperf3 counts the side it runs, and those counts come back in its results:
// forward, the receiver's figures are the iperf3 server's own; in reverse, the sender's are.
//
// The exchange, as iperf3's client runs it: the cookie, then the server's states in turn (the order is
// core/wire/iperf3/iperf3_client.hpp's: any other state is an error naming it): PARAM_EXCHANGE (our parameters as
// JSON), CREATE_STREAMS (each TCP stream connects and sends the cookie; each UDP stream sends its 4-byte
// hello and awaits the answer), TEST_START, TEST_RUNNING; at the end (or the user's stop) our TEST_END,
// EXCHANGE_RESULTS (ours, then the server's), DISPLAY_RESULTS and our IPERF_DONE. Three deadlines bound
// the whole, however the server spaces its bytes: --connect-timeout to PARAM_EXCHANGE, --connect-timeout
// from our parameters to TEST_RUNNING, and after_test_allowance from the test's end to the last state.
#include "core/data/streams.hpp"
#include "core/result/result.hpp"
#include "core/wire/iperf3/iperf3_wire.hpp"
#include "netload/native/client.hpp"

#include <boost/asio/io_context.hpp>

#include <optional>
#include <string>
#include <vector>

namespace nb::load {

// Its user's stop (load_test::interrupt) sends TEST_END early; the results are still exchanged.
class iperf3_client final : public load_test {
 public:
  using load_test::load_test;
  asio::awaitable<void> run() override;
  test_result result() const override;

 private:
  // The time left to deadline_ (at least 1 ms: a deadline passed is a timeout, never a wait without one).
  std::chrono::steady_clock::duration left() const;
  // The next state byte within deadline_; a refusal is thrown in iperf3's words. `what` names the wait.
  asio::awaitable<signed char> read_state(const std::string& what);
  asio::awaitable<void> send_state(iperf3::state s);
  asio::awaitable<std::string> read_json(const char* what);
  // Reads a refusal's codes and throws it in iperf3's words.
  asio::awaitable<void> refused(signed char s);
  iperf3::params make_params() const;
  // CREATE_STREAMS to TEST_RUNNING, within --connect-timeout of our parameters.
  asio::awaitable<void> set_up();
  // During the test: a state the server sent (it may send none but a refusal) ends the test.
  asio::awaitable<void> check_control();
  asio::awaitable<void> create_streams();
  asio::awaitable<void> connect_tcp_stream(std::uint32_t s);
  asio::awaitable<void> connect_udp_stream(std::uint32_t s);
  void start_threads();
  asio::awaitable<void> run_data();
  asio::awaitable<void> settle();
  void sample(bool final_sample);
  asio::awaitable<void> exchange_results();
  iperf3::results our_results() const;

  endpoint server_;
  std::string cookie_;
  // The current part of the exchange ends by then: the connection and handshake, the setup, or the test
  // and its results.
  std::chrono::steady_clock::time_point deadline_{};
  std::int64_t requested_start_ns_ = 0, start_wall_ns_ = 0, end_wall_ns_ = 0;
  int path_mtu_ = 0, mss_ = 0, local_buffer_granted_ = 0;
  std::optional<segmentation_figures> segmentation_;  // forward UDP_STREAM: how we send
  std::optional<receive_figures> receive_;            // reverse TCP_STREAM: how we read (forward: iperf3's own way)
  side_counts own_;                                   // this side's at the end
  iperf3::results theirs_;                            // the server's results
  std::string counted_by_ = "iperf3";                 // "iperf3 3.12" once the server's output told its version
  std::int32_t peer_buffer_ = 0;                      // the server's data socket's buffer; 0: its output did not say
  double seconds_ = 0;                                // from the start to TEST_END
  std::vector<std::pair<std::uint64_t, std::uint64_t>> own_samples_;
  std::vector<interval_figures> intervals_;
};

// Runs a test against a stock iperf3 server on `io`, with the user's stop handled as run_test does;
// failures come back as a result with ok = false and the reason.
test_result run_iperf3_test(asio::io_context& io, const client_options& options, client_events events);

}  // namespace nb::load
