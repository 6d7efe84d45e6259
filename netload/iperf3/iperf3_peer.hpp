#pragma once
// netload --peer iperf3: iperf3's client protocol to a stock `iperf3 -s`, netload's data plane, the server's
// counts for its side (docs/netload-stock-peers.md).
#include "core/data/streams.hpp"
#include "core/result/result.hpp"
#include "core/wire/iperf3/iperf3_wire.hpp"
#include "netload/native/client.hpp"

#include <boost/asio/io_context.hpp>

#include <optional>
#include <string>
#include <vector>

namespace nb::load {

// A user's stop sends TEST_END early; the results are still exchanged.
class iperf3_client final : public load_test {
 public:
  using load_test::load_test;
  asio::awaitable<void> run() override;
  test_result result() const override;

 private:
  // At least 1 ms: a deadline passed is a timeout, never a wait without one.
  std::chrono::steady_clock::duration left() const;
  // A refusal is thrown in iperf3's words; `what` names the wait.
  asio::awaitable<signed char> read_state(const std::string& what);
  asio::awaitable<void> send_state(iperf3::state s);
  asio::awaitable<std::string> read_json(const char* what);
  asio::awaitable<void> refused(signed char s);
  iperf3::params make_params() const;
  asio::awaitable<void> set_up();
  // During the test any state the server sends ends it.
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
  // Of the current part of the exchange.
  std::chrono::steady_clock::time_point deadline_{};
  std::int64_t requested_start_ns_ = 0, start_wall_ns_ = 0, end_wall_ns_ = 0;
  int path_mtu_ = 0, mss_ = 0, local_buffer_granted_ = 0;
  std::optional<segmentation_figures> segmentation_;  // forward UDP_STREAM
  std::optional<receive_figures> receive_;            // reverse TCP_STREAM
  side_counts own_;
  iperf3::results theirs_;
  std::string counted_by_ = "iperf3";  // "iperf3 3.12" once its output told the version
  std::int32_t peer_buffer_ = 0;       // 0: its output did not say
  double seconds_ = 0;                 // to TEST_END
  std::vector<std::pair<std::uint64_t, std::uint64_t>> own_samples_;
  std::vector<interval_figures> intervals_;
};

// As run_test (client.hpp), against iperf3 -s.
test_result run_iperf3_test(asio::io_context& io, const client_options& options, client_events events);

}  // namespace nb::load
