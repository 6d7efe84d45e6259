#include "netserve/native/control_connection.hpp"

#include "core/base/clock.hpp"
#include "core/base/saturating.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/base/version.hpp"
#include "core/host/host_stats.hpp"
#include "core/policy/request_rules.hpp"
#include "core/wire/netperf/netperf_wire.hpp"
#include "netserve/iperf3/iperf3_session.hpp"
#include "netserve/netperf/netperf_session.hpp"

#include <fmt/format.h>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/multiple_exceptions.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <random>
#include <tuple>

namespace nb::serve {

using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;

namespace {

std::string make_cookie() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

// Never negative; instants are validated, so no overflow.
std::chrono::nanoseconds until_wall(std::int64_t wall) {
  return std::chrono::nanoseconds(std::max<std::int64_t>(0, wall - wall_ns()));
}

constexpr std::int64_t max_start_lag_ns = 60LL * 1'000'000'000;
constexpr auto end_grace = 60s;  // for the client's end after the test's

}  // namespace

namespace {

// From just before the start instant to the end of the data: the lead and the drain are idle time,
// which would dilute the CPU shares.
asio::awaitable<void> sample_host(const served_test& t, const bool& ended, std::optional<host_delta>& out) {
  const std::int64_t at = t.start_wall_ns() - snapshot_lead_ns;
  while (!ended && wall_ns() < at) co_await sleep_for(std::min<std::chrono::nanoseconds>(until_wall(at), 100ms));
  auto from = take_host_snapshot();
  while (!ended && !(t.request().reverse && t.finished())) co_await sleep_for(10ms);
  auto to = take_host_snapshot();
  if (from && to) {
    out = host_delta_between(*from, *to);
    out->pinned_cpu = t.pinned_cpu();
  }
}

}  // namespace

control_connection::control_connection(tcp::socket socket, std::shared_ptr<served_port> port,
                                       std::shared_ptr<server_shared> shared, budget::hold unit,
                                       per_client_count::hold window)
    : unit_(std::move(unit)),
      window_(std::move(window)),
      socket_(std::move(socket)),
      port_(std::move(port)),
      shared_(std::move(shared)) {}

control_connection::~control_connection() {
  if (test_) port_->remove(*test_, client_);
}

asio::awaitable<void> control_connection::run() {
  const server_options& o = shared_->options;
  try {
    peer_ = socket_.remote_endpoint().address().to_string();
    auto timeout =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(o.first_message_timeout_s));
    // A netload frame, an iperf3 cookie or a netperf request: docs/netserve.md#ports
    if (o.psk.empty()) {
      const unsigned char first = co_await peek_byte(socket_, timeout);
      if (iperf3::is_cookie_char(first)) {
        co_await serve_iperf3(std::move(socket_), port_, shared_, std::move(unit_), std::move(window_));
        co_return;
      }
      unsigned char head[5];
      if (first == 0) co_await peek_exact(socket_, asio::buffer(head), timeout, "waiting for a message");
      if (first == 0 && netperf::looks_like_request(head)) {
        window_.reset();
        co_await serve_netperf(std::move(socket_), port_, shared_, std::move(unit_));
        co_return;
      }
    }
    if (!o.psk.empty() && co_await refused_iperf3_without_key()) co_return;
    if (!o.psk.empty()) mac_ = co_await require_auth(socket_, o.psk, timeout);
    message first = co_await read_message(socket_, mac_, timeout);
    window_.reset();
    if (auto* hello = std::get_if<data_hello>(&first)) {
      attach_data(*hello);
    } else if (auto* request = std::get_if<test_request>(&first)) {
      co_await run_test(std::move(*request));
    } else {
      throw protocol_error(
          fmt::format("first message must be 'test_request' or 'data', not '{}'", message_type(first)));
    }
  } catch (...) {
    on_failure(std::current_exception());
  }
}

// An iperf3 client sends its cookie without waiting for the challenge: it hears iperf3's own "test
// authorization failed" rather than a challenge it cannot read. netload loses the moment once per connection.
asio::awaitable<bool> control_connection::refused_iperf3_without_key() {
  constexpr auto moment = std::chrono::milliseconds(5);  // a cookie on its way over a LAN
  unsigned char first = 0;
  try {
    first = co_await peek_byte(socket_, moment);
  } catch (const protocol_error&) {  // nothing came: a netload waiting for its challenge
    co_return false;
  }
  if (!iperf3::is_cookie_char(first)) co_return false;
  fmt::print(stderr,
             "netserve: port {}: closing connection from {}: an iperf3 client, and this netserve requires a key "
             "(--psk-file), which iperf3 cannot give\n",
             port_->number, peer_);
  const char refusal[9] = {
      static_cast<char>(iperf3::state::server_error), 0, 0, 0, static_cast<char>(iperf3::error::auth_test), 0, 0, 0, 0};
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);
  socket_.write_some(asio::buffer(refusal), ec);
  co_return true;
}

void control_connection::on_failure(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const asio::multiple_exceptions& m) {
    on_failure(m.first_exception());
  } catch (const protocol_error& x) {
    tell_why(x);
  } catch (const boost::system::system_error& x) {
    fmt::print(stderr, "netserve: port {}: connection from {} lost: {}\n", port_->number, peer_, x.code().message());
  } catch (const std::exception& x) {
    fmt::print(stderr, "netserve: port {}: connection from {} failed: {}\n", port_->number, peer_,
               printable_bounded(x.what()));
  }
}

void control_connection::tell_why(const protocol_error& e) {
  // The reason may quote what the peer sent.
  fmt::print(stderr, "netserve: port {}: closing connection from {}: {}\n", port_->number, peer_,
             printable_bounded(e.what()));
  if (!socket_.is_open()) return;  // a data connection's went to its test
  std::string frame = encode_frame(error_msg{e.what()}, mac_);
  boost::system::error_code ignored;
  socket_.non_blocking(true, ignored);
  socket_.write_some(asio::buffer(frame), ignored);
}

// A refused data connection keeps its socket, to be told why.
void control_connection::attach_data(const data_hello& hello) {
  auto it = port_->tests.find(hello.cookie);
  if (it == port_->tests.end()) throw protocol_error("data connection names no test on this port");
  // The cookie travels in the clear: with a key, only the test's client's token admits.
  if (const std::string& key = it->second->data_key();
      !key.empty() && !constant_time_equal(hello.token, data_token(key, mac_, hello.cookie, hello.stream)))
    throw protocol_error("data connection without a valid token for its test");
  if (auto why = it->second->attach_tcp(hello.stream, release_blocking(socket_))) throw protocol_error(*why);
}

asio::awaitable<void> control_connection::run_test(test_request request) {
  register_test(std::move(request));
  co_await send_ready();
  co_await await_start();
  bool ended = false;
  std::optional<host_delta> host;
  const std::int64_t client_end =
      co_await (report_intervals(ended) && await_end(ended) && sample_host(*test_, ended, host));
  co_await drain();
  result_msg result{test_->finish(), test_->unattributed_since_start(), std::move(host), test_->congestion(),
                    test_->tcp_end_samples()};
  // The counts must go out; many streams' samples beside a many-CPU host's figures may not fit.
  if (encode_payload(result).size() + frame_mac::tag_size > max_frame_size) result.tcp.clear();
  const message result_m = result;
  co_await write_message(socket_, mac_, result_m);
  log_result(result, client_end);
}

void control_connection::register_test(test_request request) {
  const server_options& o = shared_->options;
  validate_request(request, o);
  check_data_peer(request, peer_of_test(request, endpoint::peer_of(socket_.native_handle()), *shared_->own_ports));
  request.rcvbuf = std::min(request.rcvbuf, o.max_socket_buffer);
  request.sndbuf = std::min(request.sndbuf, o.max_socket_buffer);
  client_ = client_of(socket_.remote_endpoint().address());
  // A port's slots are shared as the budget is, or two addresses could close it to everyone else.
  served_port& p = *port_;
  if (p.running() >= o.max_tests_per_port)
    throw protocol_error(fmt::format("rejected: port {} already runs {} tests", p.number, p.running()));
  if (const std::uint64_t share = shared_->process_budget->share_of(o.max_tests_per_port);
      p.tests_of_client[client_] >= share)
    throw protocol_error(
        fmt::format("rejected: port {} already runs {} tests from this client, one client's share of {}", p.number,
                    share, o.max_tests_per_port));
  // The whole cost, now: docs/netserve.md#budget
  std::string why;
  std::optional<budget::hold> held = shared_->process_budget->try_take(client_, cost_of(request), why);
  if (!held) throw protocol_error("rejected: " + why);
  test_budget_.emplace(std::move(*held));
  test_ = std::make_shared<served_test>(++shared_->tests_registered, make_cookie(), std::move(request),
                                        endpoint::peer_of(socket_.native_handle()),
                                        endpoint::local_of(socket_.native_handle()), p.udp, shared_->own_ports, o.xdp);
  test_->set_data_key(mac_.key());
  if (!p.add(test_, client_)) throw protocol_error("rejected: its cookie is another test's on this port");
}

asio::awaitable<void> control_connection::send_ready() {
  const test_request& r = test_->request();
  ready_msg ready{test_->id(), test_->cookie(), version, 0, 0, "", "", ""};
  if (is_udp(r.kind) && !r.reverse) {
    try {
      ready.rcvbuf = test_->attach_udp();
    } catch (const std::runtime_error& e) {  // XDP cannot count the flows
      throw protocol_error(fmt::format("rejected: {}", e.what()));
    }
    ready.batching = test_->receive_batching();
  } else {
    std::tie(ready.rcvbuf, ready.sndbuf) = test_->data_socket_buffers();
  }
  if (r.kind == test_kind::udp_stream && r.reverse) {
    const segmentation_figures& s = test_->segmentation();
    ready.segmentation = s.mode;
    ready.segmentation_why = s.why;
  }
  const message ready_m = ready;
  co_await write_message(socket_, mac_, ready_m);
}

asio::awaitable<void> control_connection::await_start() {
  const server_options& o = shared_->options;
  auto start = co_await expect_message<start_msg>(socket_, mac_, 30s);
  if (start.start_wall_ns > wall_ns() + s_to_ns(o.max_start_lead_s))
    throw protocol_error(fmt::format("rejected: start instant more than {} s ahead", o.max_start_lead_s));
  if (start.start_wall_ns < wall_ns() - max_start_lag_ns) throw protocol_error("rejected: start instant long past");
  for (int i = 0; i < 1000 && !test_->all_data_attached(); ++i) co_await sleep_for(10ms);
  if (!test_->all_data_attached()) throw protocol_error("not every TCP data connection arrived within 10 s");
  test_->start(start.start_wall_ns);
}

asio::awaitable<void> control_connection::report_intervals(const bool& ended) {
  const served_test& t = *test_;
  const test_request& r = t.request();
  if (r.interval_s <= 0) co_return;
  // At start + (k+1) * step, the instants the client samples at, so the two sides' intervals line up.
  const std::int64_t step = s_to_ns(r.interval_s), end = saturating_add(t.start_wall_ns(), s_to_ns(r.duration_s));
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (std::uint32_t k = 0;; ++k) {
    std::int64_t boundary = std::min(saturating_add(t.start_wall_ns(), saturating_mul(std::int64_t{k} + 1, step)), end);
    // Short slices, so an early end does not wait; an end that merely beat the last boundary gets it.
    while (!ended && wall_ns() < boundary) {
      timer.expires_after(std::min<std::chrono::nanoseconds>(until_wall(boundary), 100ms));
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (ended && boundary > wall_ns()) break;
    interval_msg m{k, boundary, 0, 0};
    t.totals(m.packets, m.bytes);
    m.tcp = t.tcp_samples();
    const message msg = m;
    co_await write_message(socket_, mac_, msg);
    if (boundary >= end) break;
  }
}

asio::awaitable<std::int64_t> control_connection::await_end(bool& ended) {
  const test_request& r = test_->request();
  // Late senders still send the whole duration.
  const std::int64_t end_ns = saturating_add(std::max(test_->start_wall_ns(), wall_ns()), s_to_ns(r.duration_s));
  auto timeout = until_wall(end_ns) + end_grace;
  // Its counts are the client's: not even the log uses them.
  co_await expect_message<end_msg>(socket_, mac_, timeout);
  ended = true;
  // In reverse an end before ours is its user's stop.
  if (r.reverse) test_->stop_sending();
  co_return wall_ns();
}

asio::awaitable<void> control_connection::drain() {
  const server_options& o = shared_->options;
  const test_request& r = test_->request();
  std::int64_t quiet = s_to_ns(o.drain_quiet_s);
  std::int64_t give_up = mono_ns() + s_to_ns(o.drain_max_s);
  bool udp_in = is_udp(r.kind) && !r.reverse;
  while (mono_ns() < give_up) {
    if (udp_in ? test_->drained(quiet) : test_->finished()) co_return;
    co_await sleep_for(5ms);
  }
}

// Forward, the time is this side's, to the client's end, not the sending time it claims.
void control_connection::log_result(const result_msg& result, std::int64_t client_end_wall_ns) const {
  const test_request& r = test_->request();
  const side_counts& c = result.counts;
  const double seconds =
      ns_to_s(r.reverse ? c.elapsed_ns : std::max<std::int64_t>(0, client_end_wall_ns - test_->began_wall_ns()));
  log_test_result(port_->number, *test_, c, result.unattributed, seconds);
}

}  // namespace nb::serve
