#pragma once
// One test from netload's side.
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

// requested_ns 0: none asked (soon after the handshake); server_ns: on the server's clock.
struct start_instant {
  std::int64_t requested_ns = 0, wall_ns = 0, server_ns = 0;
};

// `arrive` / `chosen`: --bidir's shared instant (none arrived: choose it and tell).
// `stop_before`: a signal --search caught between trials, asked once the test's handler is in.
struct client_events {
  interval_sink interval;
  std::function<void()> armed;
  std::function<asio::awaitable<std::optional<start_instant>>()> arrive;
  std::function<void(const start_instant&)> chosen;
  std::function<int()> stop_before;
};

// One test against one kind of server (netserve, iperf3 -s), as run_to_end drives it.
class load_test {
 public:
  load_test(asio::io_context& io, client_options options, client_events events);
  virtual ~load_test() = default;
  // Throws with the reason the test failed.
  virtual asio::awaitable<void> run() = 0;
  // Valid after run() completed.
  virtual test_result result() const = 0;
  // docs/netload-user-stop.md: false before the data threads started (abandon the test), else run()
  // completes with the figures measured.
  bool interrupt(std::string signal);

 protected:
  void traffic_started(std::int64_t end_wall_ns) noexcept { traffic_end_wall_ns_ = end_wall_ns; }
  bool stopping() const noexcept { return stop_wall_ns_ != 0; }
  const std::string& stop_signal() const noexcept { return stop_signal_; }
  std::int64_t stop_wall_ns() const noexcept { return stop_wall_ns_; }

  asio::io_context& io_;
  client_options o_;
  client_events events_;
  tcp::socket control_;
  stream_set streams_;  // senders, or receivers in reverse

 private:
  std::int64_t traffic_end_wall_ns_ = 0;  // 0 until the data threads started
  std::string stop_signal_;
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
  asio::awaitable<frame_mac> authenticate(tcp::socket& s);
  // --connect-timeout bounds the whole handshake: a listener that never answers is found out.
  std::chrono::steady_clock::duration handshake_left() const;
  void open_udp_sockets();
  asio::awaitable<void> open_tcp_streams();
  asio::awaitable<std::int64_t> read_start_instant();
  test_request make_request() const;
  void start_threads();
  asio::awaitable<void> local_side();
  asio::awaitable<void> sleep_until_wall(std::int64_t t);
  // Once: in reverse a stopped test sends it early, so the server stops sending.
  asio::awaitable<void> send_end(side_counts counts);
  asio::awaitable<void> wait_local_done();
  asio::awaitable<result_msg> read_server();
  void sample_host_end();
  void sample_latency();
  void emit_intervals(bool final);
  void leave_out_start(test_result& r, const side_counts& sender) const;
  void note_interruption(test_result& r) const;
  bool sends_tcp() const noexcept { return o_.kind == test_kind::tcp_stream && !o_.reverse; }
  // The senders' TCP_INFO at the end of interval k: ours forward, the server's in reverse.
  const std::vector<tcp_sample>& tcp_at(std::uint32_t k) const;
  std::optional<tcp_figures> tcp_interval(std::uint32_t k) const;
  std::optional<tcp_figures> tcp_end() const;

  std::string psk_;
  frame_mac control_mac_;
  endpoint server_;
  ready_msg ready_;
  std::chrono::steady_clock::time_point handshake_deadline_{};
  std::int64_t start_wall_ns_ = 0;
  std::int64_t requested_start_ns_ = 0;
  std::int64_t server_start_ns_ = 0;  // on the server's clock, when the harness gave one
  std::int64_t server_instant() const noexcept { return server_start_ns_ ? server_start_ns_ : start_wall_ns_; }
  int path_mtu_ = 0;
  int mss_ = 0;
  int local_buffer_granted_ = 0;
  std::optional<receive_figures> receive_;
  std::optional<segmentation_figures> segmentation_;
  side_counts local_final_;
  result_msg server_final_;
  std::optional<host_snapshot> host_start_, host_end_;

  bool end_sent_ = false;

  // Cumulative, at interval boundaries.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> own_samples_;
  std::vector<std::vector<tcp_sample>> own_tcp_;
  std::vector<nlohmann::json> own_latency_;
  latency_histogram latency_at_last_sample_;
  std::map<std::uint32_t, interval_msg> server_samples_;
  std::vector<interval_figures> intervals_;
};

// Throws std::runtime_error naming what failed ("timed out").
asio::awaitable<void> connect_within(tcp::socket& s, const tcp::endpoint& to, double timeout_s);

// Says "armed", then reads "T [S]" (S: T on the server's clock), in ns.
asio::awaitable<std::pair<std::int64_t, std::int64_t>> read_start_line(asio::io_context& io,
                                                                       const std::function<void()>& armed);
std::pair<std::int64_t, std::int64_t> parse_start_line(std::string_view line);

// The first of two when both halves of a parallel wait failed.
std::string describe_failure(std::exception_ptr e);
test_result failed_result(const client_options& o, std::string reason);

template <class Message>
void name_test(Message& m, const client_options& o) {
  m.kind = o.kind;
  m.message_size = o.message_size;
  m.streams = o.streams;
  m.reverse = o.reverse;
}

// As asked, or chosen from where the peer of `control` is; sets o.recv_copy.
receive_figures resolve_receive(client_options& o, int control);

// As asked, or chosen from the route's device (core/data/segmentation.hpp); sets o.send_gso.
segmentation_figures resolve_gso(client_options& o, const endpoint& peer, const endpoint& source);

// The callers fill in the rest (payload format, RR sizes).
stream_plan common_stream_plan(const client_options& o, int fd, std::uint32_t stream, std::int64_t start_wall_ns);

// Returns the buffer the kernel granted.
int open_udp_data_socket(const client_options& o, const endpoint& server, const endpoint& local, data_stream& st);

// A failure comes back as a result with ok = false and the reason.
template <class Test>
test_result run_to_end(asio::io_context& io, std::shared_ptr<Test> test, const client_options& options,
                       const std::function<int()>& stop_before = {}) {
  std::string failure;
  bool completed = false;
  user_stop stop(io, [&](const std::string& signal) { return test->interrupt(signal); });
  if (const int signal = stop_before ? stop_before() : 0) return stop.before_start(options, signal);
  asio::co_spawn(io, test->run(), [&](std::exception_ptr e) {
    io.stop();  // the signal handler is the only other work left
    completed = true;
    if (e) failure = describe_failure(e);
  });
  io.run();
  test_result r = !completed         ? stop.abandoned_result(options)
                  : !failure.empty() ? failed_result(options, failure)
                                     : test->result();
  escape_peer_text(r);
  return r;
}

test_result run_test(asio::io_context& io, const client_options& options, client_events events);

}  // namespace nb::load
