#include "netload/iperf3/iperf3_peer.hpp"

#include "core/base/clock.hpp"
#include "core/base/version.hpp"
#include "core/wire/iperf3/iperf3_client.hpp"
#include "core/wire/native/frame_io.hpp"
#include "netload/native/user_stop.hpp"

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <sys/socket.h>

namespace nb::load {

using namespace std::chrono_literals;
namespace i3 = iperf3;

namespace {

// From the test's end to the last state; longer than our senders' own bounds.
constexpr auto after_test_allowance = 30s;

std::chrono::steady_clock::time_point after(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
}

std::string make_cookie() {
  static constexpr char chars[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::random_device rd;
  std::string c;
  for (std::size_t i = 0; i + 1 < i3::cookie_size; ++i) c += chars[rd() % 32];
  c += '\0';
  return c;
}

}  // namespace

std::chrono::steady_clock::duration iperf3_client::left() const {
  return std::max<std::chrono::steady_clock::duration>(deadline_ - std::chrono::steady_clock::now(), 1ms);
}

asio::awaitable<signed char> iperf3_client::read_state(const std::string& what) {
  signed char s = 0;
  co_await read_exact(control_, asio::buffer(&s, 1), left(), what.c_str());
  if (i3::is_refusal(s)) co_await refused(s);
  co_return s;
}

asio::awaitable<void> iperf3_client::refused(signed char s) {
  unsigned char codes[8] = {};  // SERVER_ERROR: i_errno and errno, big-endian
  if (static_cast<i3::state>(s) == i3::state::server_error)
    co_await read_exact(control_, asio::buffer(codes), std::min<std::chrono::steady_clock::duration>(left(), 5s),
                        "reading iperf3's error code");
  const auto code = static_cast<std::int32_t>((std::uint32_t{codes[0]} << 24) | (std::uint32_t{codes[1]} << 16) |
                                              (std::uint32_t{codes[2]} << 8) | codes[3]);
  throw std::runtime_error(i3::refusal_text(s, code));
}

asio::awaitable<void> iperf3_client::send_state(i3::state s) {
  co_await write_frame(control_, std::string(1, static_cast<char>(static_cast<signed char>(s))),
                       std::min<std::chrono::steady_clock::duration>(left(), 10s));
}

asio::awaitable<std::string> iperf3_client::read_json(const char* what) {
  unsigned char h[4];
  co_await read_exact(control_, asio::buffer(h), left(), what);
  const std::size_t n = (std::size_t{h[0]} << 24) | (std::size_t{h[1]} << 16) | (std::size_t{h[2]} << 8) | h[3];
  if (n > i3::max_server_results_size)
    throw protocol_error(fmt::format("iperf3 message of {} bytes, more than {}", n, i3::max_server_results_size));
  std::string body(n, '\0');
  co_await read_exact(control_, asio::buffer(body), left(), what);
  co_return body;
}

i3::params iperf3_client::make_params() const {
  i3::params p;
  (o_.kind == test_kind::udp_stream ? p.udp : p.tcp) = true;
  p.time = static_cast<std::int64_t>(std::ceil(o_.duration_s));
  p.parallel = o_.streams;
  p.reverse = o_.reverse;
  p.len = o_.message_size;
  // Per stream, as iperf3's -b; the server paces by it in reverse.
  if (o_.target_pps() > 0)
    p.bandwidth = static_cast<std::uint64_t>(o_.target_pps() * o_.message_size * 8.0 / o_.streams);
  p.window = o_.remote_buffer;
  p.mss = o_.mss;
  p.congestion = o_.congestion;
  p.server_affinity = o_.remote_cpu;
  if (o_.dscp >= 0) p.tos = o_.dscp << 2;
  p.udp_counters_64bit = o_.kind == test_kind::udp_stream;
  p.get_server_output = true;  // tells its version, for the result's "counted by"
  p.client_version = fmt::format("netload {}", version);
  return p;
}

asio::awaitable<void> iperf3_client::connect_tcp_stream(std::uint32_t s) {
  tcp::endpoint to(asio::ip::make_address(server_.address()), o_.port);
  tcp::socket sock(io_);
  sock.open(to.protocol());
  if (!o_.local_address.empty()) sock.bind(tcp::endpoint(asio::ip::make_address(o_.local_address), 0));
  if (o_.mss) set_tcp_mss(sock.native_handle(), static_cast<int>(o_.mss));
  if (!o_.congestion.empty()) set_tcp_congestion(sock.native_handle(), o_.congestion);
  if (o_.local_buffer > 0)
    local_buffer_granted_ = o_.reverse ? set_recv_buffer(sock.native_handle(), o_.local_buffer)
                                       : set_send_buffer(sock.native_handle(), o_.local_buffer);
  co_await connect_within(sock, to, std::chrono::duration<double>(left()).count());
  if (o_.dscp >= 0) set_dscp(sock.native_handle(), server_.family(), o_.dscp);
  co_await write_frame(sock, cookie_, left());
  fd_handle fd = release_blocking(sock);
  mss_ = tcp_mss(fd.get());
  path_mtu_ = path_mtu(fd.get(), server_.family());
  if (o_.local_buffer <= 0) local_buffer_granted_ = o_.reverse ? recv_buffer(fd.get()) : send_buffer(fd.get());
  streams_[s].fd = std::move(fd);
}

// One after another: iperf3 takes each hello on its listening socket, then opens the next.
asio::awaitable<void> iperf3_client::connect_udp_stream(std::uint32_t s) {
  endpoint local = endpoint::local_of(control_.native_handle());
  local.set_port(0);
  local_buffer_granted_ = open_udp_data_socket(o_, server_, local, streams_[s]);
  const int fd = streams_[s].fd.get();
  path_mtu_ = path_mtu(fd, server_.family());
  if (int room = max_udp_payload(path_mtu_, server_.family());
      path_mtu_ > 0 && static_cast<int>(o_.message_size) > room)
    throw std::runtime_error(
        fmt::format("message of {} bytes does not fit the path MTU {} to {} (largest UDP payload {})", o_.message_size,
                    path_mtu_, server_.address(), room));
  if (s == 0 && !o_.reverse) segmentation_ = resolve_gso(o_, server_, endpoint::local_of(fd));
  const std::uint32_t hello = i3::udp_connect_msg;
  if (::send(fd, &hello, sizeof hello, 0) != static_cast<ssize_t>(sizeof hello))
    throw std::runtime_error(fmt::format("cannot send iperf3's UDP hello: {}", std::strerror(errno)));
  std::uint32_t answer = 0;
  for (;;) {
    const ssize_t n = ::recv(fd, &answer, sizeof answer, MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(sizeof answer) && answer == i3::udp_connect_reply) break;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      throw std::runtime_error(fmt::format("UDP stream {}: no answer to its hello: {}", s + 1, std::strerror(errno)));
    if (std::chrono::steady_clock::now() >= deadline_)
      throw std::runtime_error(fmt::format(
          "UDP stream {}: the iperf3 server did not answer its hello within the setup's {:g} s (--connect-timeout)",
          s + 1, o_.connect_timeout_s));
    co_await sleep_for(2ms);
  }
  streams_[s].received.format = payload_format::iperf3_64;
}

asio::awaitable<void> iperf3_client::create_streams() {
  // One co_await per call, no conditional operator between two awaitables: GCC 12 destroys the
  // temporary of the one not taken twice.
  for (std::uint32_t s = 0; s < o_.streams; ++s) {
    if (o_.kind == test_kind::udp_stream) co_await connect_udp_stream(s);
    else co_await connect_tcp_stream(s);
  }
}

asio::awaitable<void> iperf3_client::run() {
  deadline_ = after(o_.connect_timeout_s);
  server_ = endpoint::resolve(o_.host, o_.port, o_.family);
  tcp::endpoint to(asio::ip::make_address(server_.address()), o_.port);
  control_.open(to.protocol());
  if (!o_.local_address.empty()) control_.bind(tcp::endpoint(asio::ip::make_address(o_.local_address), 0));
  co_await connect_within(control_, to, o_.connect_timeout_s);
  control_.set_option(tcp::no_delay(true));
  if (o_.kind == test_kind::tcp_stream && o_.reverse) receive_ = resolve_receive(o_, control_.native_handle());
  cookie_ = make_cookie();
  co_await write_frame(control_, cookie_, left());
  const std::string first = "waiting for iperf3's PARAM_EXCHANGE (is an iperf3 -s listening there?)";
  i3::expect_state(co_await read_state(first), i3::state::param_exchange, "first");
  // Armed before the setup: in reverse iperf3 sends once its streams are up.
  if (o_.start_on_stdin) requested_start_ns_ = (co_await read_start_line(io_, events_.armed)).first;
  else if (o_.start_at) requested_start_ns_ = static_cast<std::int64_t>(*o_.start_at * 1e9);
  if (requested_start_ns_ && requested_start_ns_ < wall_ns())
    throw std::runtime_error(fmt::format("start instant {:.6f} is in the past: refused; give an instant in the future",
                                         ns_to_s(requested_start_ns_)));
  const i3::params params = make_params();
  co_await write_frame(control_, i3::frame(i3::encode_params(params)), 10s);
  co_await set_up();
  start_wall_ns_ = std::max(requested_start_ns_, wall_ns() + 1'000'000);
  end_wall_ns_ = start_wall_ns_ + s_to_ns(o_.duration_s);
  deadline_ =
      std::chrono::steady_clock::now() + std::chrono::nanoseconds(end_wall_ns_ - wall_ns()) + after_test_allowance;
  start_threads();
  traffic_started(end_wall_ns_);
  co_await run_data();
  co_await exchange_results();
}

asio::awaitable<void> iperf3_client::set_up() {
  deadline_ = after(o_.connect_timeout_s);
  i3::setup_states states;
  for (;;) {
    const std::string what = fmt::format(
        "waiting for iperf3's {} (the server has --connect-timeout, {:g} s, from our parameters to TEST_RUNNING{})",
        states.awaited(), o_.connect_timeout_s, *states.last() ? fmt::format("; it sent {}", states.last()) : "");
    const i3::setup_states::step step = states.take(co_await read_state(what));
    if (step == i3::setup_states::step::run) co_return;
    if (step == i3::setup_states::step::create_streams) co_await create_streams();
  }
}

asio::awaitable<void> iperf3_client::check_control() {
  boost::system::error_code ec;
  if (control_.available(ec) == 0 || ec) co_return;
  const std::string what = "reading iperf3's state during the test";
  const signed char s = co_await read_state(what);
  throw protocol_error(fmt::format("iperf3 server sent {} during the test", i3::state_name(s)));
}

// The server's -J output tells its version and its buffer as granted.
asio::awaitable<void> iperf3_client::exchange_results() {
  const std::string results_wait =
      fmt::format("waiting for iperf3's EXCHANGE_RESULTS (the server has {} s from the test's end to its last state)",
                  after_test_allowance.count());
  i3::expect_state(co_await read_state(results_wait), i3::state::exchange_results, "after TEST_END");
  co_await write_frame(control_, i3::frame(i3::encode_results(our_results())),
                       std::min<std::chrono::steady_clock::duration>(left(), 10s));
  const std::string body = co_await read_json("reading iperf3's results");
  i3::server_results theirs = i3::read_server_results(body, o_.streams);
  if (!theirs.version.empty()) counted_by_ = std::move(theirs.version);
  peer_buffer_ = o_.reverse ? theirs.sndbuf : theirs.rcvbuf;
  theirs_ = std::move(theirs.figures);
  const std::string display_wait = "waiting for iperf3's DISPLAY_RESULTS";
  i3::expect_state(co_await read_state(display_wait), i3::state::display_results, "after its results");
  co_await send_state(i3::state::iperf_done);
  boost::system::error_code ignored;
  control_.shutdown(tcp::socket::shutdown_both, ignored);
}

test_result run_iperf3_test(asio::io_context& io, const client_options& options, client_events events) {
  const std::function<int()> stop_before = events.stop_before;
  return run_to_end(io, std::make_shared<iperf3_client>(io, options, std::move(events)), options, stop_before);
}

}  // namespace nb::load
