#pragma once
// One test from netload's side: control connection, data sockets and threads, intervals, result.
#include "core/data/streams.hpp"
#include "core/result/result.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/flow.hpp"
#include "core/wire/native/frame_io.hpp"
#include "netload/cli/cli.hpp"
#include "netload/native/user_stop.hpp"

#include <boost/asio/co_spawn.hpp>

#include <boost/asio/io_context.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace nb::load {

using interval_sink = std::function<void(const interval_figures&)>;

// A start instant: as asked (0 = none: soon after the handshake), as used, and on the server's clock.
struct start_instant {
  std::int64_t requested_ns = 0, wall_ns = 0, server_ns = 0;
};

// What a test tells its caller while it runs: each interval, and (with --start-on-stdin) the moment it is
// connected and waits for its start instant. --bidir's two tests share one instant (netload/native/bidir.cpp):
// after its handshake a test awaits `arrive`, which gives the instant another test chose or nothing (this
// test chooses as usual and tells `chosen`). netload --search catches the user's stop between its trials:
// `stop_before` gives a signal it caught (0: none), asked once the test's own handler is in place and
// before anything is sent, so a stop in between ends the test before it starts.
struct client_events {
  interval_sink interval;
  std::function<void()> armed;
  std::function<asio::awaitable<std::optional<start_instant>>()> arrive;
  std::function<void(const start_instant&)> chosen;
  std::function<int()> stop_before;
};

// What run_to_end drives: one test against one kind of server (client_test: netserve; iperf3_client: a
// stock iperf3 -s), with what every such test holds: its options, its control connection and this side's
// streams; and the user's stop, which every such test takes alike.
class load_test {
 public:
  load_test(asio::io_context& io, client_options options, client_events events);
  virtual ~load_test() = default;
  // Runs the test; throws (protocol_error, system_error, std::runtime_error) with the reason it failed:
  // the server's refusal, a timeout, a lost connection.
  virtual asio::awaitable<void> run() = 0;
  // The figures; valid after run() completed.
  virtual test_result result() const = 0;
  // The user's stop (SIGINT, SIGTERM; `signal` names it). Before the data threads started it returns
  // false: the caller abandons the test, and nothing is ever sent. After, it returns true: this side's
  // senders stop at once (in reverse the server is told to stop first, then what is in flight is
  // drained), the end exchange runs as at a normal end, and run() completes with figures over the seconds
  // measured, which result() marks interrupted. Past the end of the traffic it changes nothing: the
  // drain and the end exchange finish as usual.
  bool interrupt(std::string signal);

 protected:
  // The data threads run until `end_wall_ns`: a stop from now on ends their traffic and keeps its figures.
  void traffic_started(std::int64_t end_wall_ns) noexcept { traffic_end_wall_ns_ = end_wall_ns; }
  bool stopping() const noexcept { return stop_wall_ns_ != 0; }
  const std::string& stop_signal() const noexcept { return stop_signal_; }
  std::int64_t stop_wall_ns() const noexcept { return stop_wall_ns_; }

  asio::io_context& io_;
  client_options o_;
  client_events events_;
  tcp::socket control_;
  stream_set streams_;  // this side's: senders, or receivers in reverse

 private:
  std::int64_t traffic_end_wall_ns_ = 0;  // 0 until the data threads started
  std::string stop_signal_;               // the user's stop, once interrupt() accepted it
  std::int64_t stop_wall_ns_ = 0;
};

class client_test final : public load_test {
 public:
  client_test(asio::io_context& io, client_options options, client_events events);
  asio::awaitable<void> run() override;
  test_result result() const override;

 private:
  void bind_local(tcp::socket& s, const tcp::endpoint& to) const;
  asio::awaitable<void> connect_control();
  // Answers the server's challenge when we have a key; the connection's MAC state (unkeyed without one).
  asio::awaitable<frame_mac> authenticate(tcp::socket& s);
  // What is left of --connect-timeout, which bounds the connection and the whole handshake (a listener
  // that accepts and says nothing is found out in that time, not in the protocol's own 10 s).
  std::chrono::steady_clock::duration handshake_left() const;
  void open_udp_sockets();
  asio::awaitable<void> open_tcp_streams();
  asio::awaitable<std::int64_t> read_start_instant();  // --start-on-stdin
  test_request make_request() const;
  void start_threads();
  asio::awaitable<void> local_side();
  // Until wall-clock `t`, or the user's stop, in short slices.
  asio::awaitable<void> sleep_until_wall(std::int64_t t);
  // The end message, once: in reverse a stopped test sends it early, so the server stops sending.
  asio::awaitable<void> send_end(side_counts counts);
  asio::awaitable<void> wait_local_done();
  asio::awaitable<result_msg> read_server();
  void sample_host_end();  // once: the end of this side's data
  void sample_latency();   // request/response: the round trips since the last sample, for the interval
  void emit_intervals(bool final);
  // --omit: the sender's and receiver's figures from the end of the left-out part on.
  void leave_out_start(test_result& r) const;
  // The user's stop: the result says so, and one stopped before the start instant has no figures.
  void note_interruption(test_result& r) const;
  bool sends_tcp() const noexcept { return o_.kind == test_kind::tcp_stream && !o_.reverse; }
  // TCP: the sending streams' connections at the end of interval k (ours forward, the server's in
  // reverse), empty when unknown; and the interval's figures from them.
  const std::vector<tcp_sample>& tcp_at(std::uint32_t k) const;
  std::optional<tcp_figures> tcp_interval(std::uint32_t k) const;
  // TCP: the sending streams' connections at their end, and their congestion control.
  std::optional<tcp_figures> tcp_end() const;

  std::string psk_;  // from o_.psk_file, read once
  frame_mac control_mac_;
  endpoint server_;
  ready_msg ready_;
  std::chrono::steady_clock::time_point handshake_deadline_{};
  std::int64_t start_wall_ns_ = 0;
  std::int64_t requested_start_ns_ = 0;
  std::int64_t server_start_ns_ = 0;  // the start instant on the server's clock, when the harness gave one
  int path_mtu_ = 0;
  int mss_ = 0;
  int local_buffer_granted_ = 0;
  std::optional<receive_figures> receive_;            // TCP_STREAM: how the receiver reads, once connected
  std::optional<segmentation_figures> segmentation_;  // UDP_STREAM: how the sender sends, once connected
  side_counts local_final_;
  result_msg server_final_;
  std::optional<host_snapshot> host_start_, host_end_;  // this host at the start instant and the end

  bool end_sent_ = false;

  // Cumulative samples at interval boundaries: own side by index, server side as it reports them.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> own_samples_;
  std::vector<std::vector<tcp_sample>> own_tcp_;  // forward TCP: TCP_INFO per stream, by interval
  std::vector<nlohmann::json> own_latency_;       // request/response: each interval's round trips (summary)
  latency_histogram latency_at_last_sample_;
  std::map<std::uint32_t, interval_msg> server_samples_;
  std::vector<interval_figures> intervals_;
};

// Connects within the timeout; throws std::runtime_error naming what failed ("connection refused", "timed out").
asio::awaitable<void> connect_within(tcp::socket& s, const tcp::endpoint& to, double timeout_s);

// --start-on-stdin: says "armed", then reads "T" or "T S" from standard input within 25 s: the start
// instant, and the same instant on the server's clock (T again when not given), both in ns.
asio::awaitable<std::pair<std::int64_t, std::int64_t>> read_start_line(asio::io_context& io,
                                                                       const std::function<void()>& armed);
// That line's instants (without its newline); throws std::runtime_error for anything else.
std::pair<std::int64_t, std::int64_t> parse_start_line(std::string_view line);

// A test's failure in one line (the first of two when both halves of a parallel wait failed).
std::string describe_failure(std::exception_ptr e);
// The result of a test that failed: what was asked for, and why it failed.
test_result failed_result(const client_options& o, std::string reason);

// What names the test in the request to the server and in its result: its kind, message size, streams
// and direction, as the options give them.
template <class Message>
void name_test(Message& m, const client_options& o) {
  m.kind = o.kind;
  m.message_size = o.message_size;
  m.streams = o.streams;
  m.reverse = o.reverse;
}

// TCP_STREAM: how this test's receiver (netserve forward, netload in reverse) takes its bytes in, as asked
// or chosen from where the peer is (`control`: a socket connected to it); sets o.recv_copy to match.
receive_figures resolve_receive(client_options& o, int control);

// UDP_STREAM: whether this host sends GSO buffers to `peer` or datagram by datagram, as asked or chosen
// from the route's device from `source` (the data socket's address; core/data/segmentation.hpp); sets
// o.send_gso to match.
segmentation_figures resolve_gso(client_options& o, const endpoint& peer, const endpoint& source);

// What every stream of a test sends or receives by, from the options: netload's own client and the
// stock-peer clients fill in the rest (payload format, RR sizes).
stream_plan common_stream_plan(const client_options& o, int fd, std::uint32_t stream, std::int64_t start_wall_ns);

// A UDP data socket connected to `server` from `local`'s address: DF set, DSCP marked, its buffer sized for
// its direction (a receiver's drop counter noted in `st`); returns the buffer the kernel granted.
int open_udp_data_socket(const client_options& o, const endpoint& server, const endpoint& local, data_stream& st);

// Runs a test object (client_test, iperf3_client) to its end on `io`: a user's stop interrupts it
// (user_stop.hpp), a failure comes back as a result with ok = false and the reason; what the server said in
// it is printable (escape_peer_text).
template <class Test>
test_result run_to_end(asio::io_context& io, std::shared_ptr<Test> test, const client_options& options,
                       const std::function<int()>& stop_before = {}) {
  std::string failure;
  bool completed = false;
  user_stop stop(io, [&](const std::string& signal) { return test->interrupt(signal); });
  if (const int signal = stop_before ? stop_before() : 0) return stop.before_start(options, signal);
  asio::co_spawn(io, test->run(), [&](std::exception_ptr e) {
    io.stop();  // the test is over: the signal handler is the only other work left
    completed = true;
    if (e) failure = describe_failure(e);
  });
  io.run();
  test_result r = !completed         ? stop.abandoned_result(options)
                  : !failure.empty() ? failed_result(options, failure)
                                     : test->result();
  escape_peer_text(r);  // the server's names and reasons are in it
  return r;
}

// Runs a test to completion on `io`; failures come back as a result with ok = false and the reason.
test_result run_test(asio::io_context& io, const client_options& options, client_events events);

}  // namespace nb::load
