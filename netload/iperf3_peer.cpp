// The control side of netload --peer iperf3: the handshake, the streams, the end and the results exchange.
#include "netload/iperf3_peer.hpp"

#include "core/base/clock.hpp"
#include "core/base/json_text.hpp"
#include "core/base/version.hpp"
#include "core/wire/frame_io.hpp"
#include "netload/user_stop.hpp"

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <sys/socket.h>

namespace nb::load {

using namespace std::chrono_literals;
namespace i3 = iperf3;

namespace {

constexpr auto step_timeout = 30s;  // each state the server owes us outside the test itself
// The server's results carry its own JSON output (get_server_output), intervals and all: more than the
// parameters' cap, still bounded.
constexpr std::size_t max_results_size = 4u << 20;

std::string make_cookie() {
  static constexpr char chars[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::random_device rd;
  std::string c;
  for (std::size_t i = 0; i + 1 < i3::cookie_size; ++i) c += chars[rd() % 32];
  c += '\0';
  return c;
}

// iperf3's i_errno values a server refuses with, in the words of iperf3's own client.
std::string error_text(std::int32_t code) {
  switch (static_cast<i3::error>(code)) {
    case i3::error::duration: return "test duration too long";
    case i3::error::num_streams: return "number of parallel streams too large";
    case i3::error::block_size: return "block size too large";
    case i3::error::buf_size: return "socket buffer size too large";
    case i3::error::mss: return "TCP MSS too large";
    case i3::error::unimplemented: return "an option you are trying to set is not implemented yet";
    case i3::error::udp_block_size: return "block size invalid";
    case i3::error::set_congestion: return "unable to set TCP_CONGESTION";
    case i3::error::auth_test: return "test authorization failed";
    case i3::error::stream_accept: return "unable to accept stream connection";
    default: return fmt::format("iperf3 error code {}", code);
  }
}

}  // namespace

asio::awaitable<i3::state> iperf3_client::read_state(std::chrono::steady_clock::duration timeout, const char* what) {
  signed char s = 0;
  co_await read_exact(control_, asio::buffer(&s, 1), timeout, what);
  const auto st = static_cast<i3::state>(s);
  if (st == i3::state::server_error || st == i3::state::access_denied || st == i3::state::server_terminate)
    co_await refused(st);
  co_return st;
}

asio::awaitable<void> iperf3_client::refused(i3::state s) {
  if (s == i3::state::access_denied)
    throw std::runtime_error("iperf3 server: the server is busy running a test (ACCESS_DENIED)");
  if (s == i3::state::server_terminate) throw std::runtime_error("iperf3 server: the server terminated the test");
  unsigned char codes[8] = {};  // i_errno and errno, big-endian
  co_await read_exact(control_, asio::buffer(codes), 5s, "reading iperf3's error code");
  const auto code = static_cast<std::int32_t>((std::uint32_t{codes[0]} << 24) | (std::uint32_t{codes[1]} << 16) |
                                              (std::uint32_t{codes[2]} << 8) | codes[3]);
  throw std::runtime_error(fmt::format("iperf3 server refused the test: {}", error_text(code)));
}

asio::awaitable<void> iperf3_client::send_state(i3::state s) {
  co_await write_frame(control_, std::string(1, static_cast<char>(static_cast<signed char>(s))), 10s);
}

asio::awaitable<std::string> iperf3_client::read_json(const char* what) {
  unsigned char h[4];
  co_await read_exact(control_, asio::buffer(h), step_timeout, what);
  const std::size_t n = (std::size_t{h[0]} << 24) | (std::size_t{h[1]} << 16) | (std::size_t{h[2]} << 8) | h[3];
  if (n > max_results_size)
    throw protocol_error(fmt::format("iperf3 message of {} bytes, more than {}", n, max_results_size));
  std::string body(n, '\0');
  co_await read_exact(control_, asio::buffer(body), step_timeout, what);
  co_return body;
}

i3::params iperf3_client::make_params() const {
  i3::params p;
  (o_.kind == test_kind::udp_stream ? p.udp : p.tcp) = true;
  p.time = static_cast<std::int64_t>(std::ceil(o_.duration_s));
  p.parallel = o_.streams;
  p.reverse = o_.reverse;
  p.len = o_.message_size;
  // Per stream, as iperf3's -b: the server paces by it when it sends; when we send, our pacer does.
  if (o_.target_pps() > 0)
    p.bandwidth = static_cast<std::uint64_t>(o_.target_pps() * o_.message_size * 8.0 / o_.streams);
  p.window = o_.remote_buffer;
  p.mss = o_.mss;
  p.congestion = o_.congestion;
  p.server_affinity = o_.remote_cpu;
  if (o_.dscp >= 0) p.tos = o_.dscp << 2;
  p.udp_counters_64bit = o_.kind == test_kind::udp_stream;
  p.get_server_output = true;  // its JSON output tells its version, for the result's "counted by"
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
  co_await connect_within(sock, to, o_.connect_timeout_s);
  if (o_.dscp >= 0) set_dscp(sock.native_handle(), server_.family(), o_.dscp);
  co_await write_frame(sock, cookie_, 10s);
  fd_handle fd = release_blocking(sock);
  mss_ = tcp_mss(fd.get());
  path_mtu_ = path_mtu(fd.get(), server_.family());
  if (o_.local_buffer <= 0) local_buffer_granted_ = o_.reverse ? recv_buffer(fd.get()) : send_buffer(fd.get());
  streams_[s].fd = std::move(fd);
}

// A UDP stream announces itself with a 4-byte datagram and waits for the server's answer, one stream after
// another (iperf3's server takes each hello on its listening socket, then opens the next).
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
  const std::uint32_t hello = i3::udp_connect_msg;
  if (::send(fd, &hello, sizeof hello, 0) != static_cast<ssize_t>(sizeof hello))
    throw std::runtime_error(fmt::format("cannot send iperf3's UDP hello: {}", std::strerror(errno)));
  std::uint32_t answer = 0;
  for (int i = 0;; ++i) {
    const ssize_t n = ::recv(fd, &answer, sizeof answer, MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(sizeof answer) && answer == i3::udp_connect_reply) break;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      throw std::runtime_error(fmt::format("UDP stream {}: no answer to its hello: {}", s + 1, std::strerror(errno)));
    if (i == 5000)
      throw std::runtime_error(
          fmt::format("UDP stream {}: the iperf3 server did not answer its hello within 10 s", s + 1));
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
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(o_.connect_timeout_s));
  server_ = endpoint::resolve(o_.host, o_.port, o_.family);
  if (o_.kind == test_kind::udp_stream && !o_.reverse) segmentation_ = resolve_gso(o_, server_);
  tcp::endpoint to(asio::ip::make_address(server_.address()), o_.port);
  control_.open(to.protocol());
  if (!o_.local_address.empty()) control_.bind(tcp::endpoint(asio::ip::make_address(o_.local_address), 0));
  co_await connect_within(control_, to, o_.connect_timeout_s);
  control_.set_option(tcp::no_delay(true));
  if (o_.kind == test_kind::tcp_stream && o_.reverse) receive_ = resolve_receive(o_, control_.native_handle());
  cookie_ = make_cookie();
  co_await write_frame(control_, cookie_, 10s);
  const auto left = std::max<std::chrono::steady_clock::duration>(deadline_ - std::chrono::steady_clock::now(), 1ms);
  i3::state s = co_await read_state(left, "waiting for iperf3's PARAM_EXCHANGE (is an iperf3 -s listening there?)");
  if (s != i3::state::param_exchange) throw protocol_error(fmt::format("iperf3 server sent state {} first", int(s)));
  // The harness's barrier: connected, armed; the test itself is set up once the instant is known (an
  // iperf3 server sends as soon as its streams are up, in reverse).
  if (o_.start_on_stdin) requested_start_ns_ = (co_await read_start_line(io_, events_.armed)).first;
  else if (o_.start_at) requested_start_ns_ = static_cast<std::int64_t>(*o_.start_at * 1e9);
  if (requested_start_ns_ && requested_start_ns_ < wall_ns())
    throw std::runtime_error(fmt::format("start instant {:.6f} is in the past: refused; give an instant in the future",
                                         ns_to_s(requested_start_ns_)));
  const i3::params params = make_params();
  co_await write_frame(control_, i3::frame(i3::encode_params(params)), 10s);
  for (bool running = false; !running;) {
    s = co_await read_state(step_timeout, "waiting for iperf3's next state");
    switch (s) {
      case i3::state::create_streams: co_await create_streams(); break;
      case i3::state::test_start: break;
      case i3::state::test_running: running = true; break;
      default: throw protocol_error(fmt::format("iperf3 server sent state {} while setting up the test", int(s)));
    }
  }
  start_wall_ns_ = std::max(requested_start_ns_, wall_ns() + 1'000'000);
  end_wall_ns_ = start_wall_ns_ + s_to_ns(o_.duration_s);
  start_threads();
  traffic_started(end_wall_ns_);
  co_await run_data();
  co_await exchange_results();
}

asio::awaitable<void> iperf3_client::exchange_results() {
  i3::state s = co_await read_state(step_timeout, "waiting for iperf3's EXCHANGE_RESULTS");
  if (s != i3::state::exchange_results)
    throw protocol_error(fmt::format("iperf3 server sent state {} after TEST_END", int(s)));
  co_await write_frame(control_, i3::frame(i3::encode_results(our_results())), 10s);
  bool too_deep = false;
  nlohmann::json j = parse_json_bounded(co_await read_json("reading iperf3's results"), max_json_depth, &too_deep);
  if (!j.is_object()) throw protocol_error("iperf3 results: not a JSON object");
  if (auto out = j.find("server_output_json"); out != j.end() && out->is_object()) read_server_output(*out);
  j.erase("server_output_json");
  j.erase("server_output_text");
  theirs_ = i3::parse_results(j.dump());
  if (theirs_.streams.size() != o_.streams)
    throw protocol_error(fmt::format("iperf3 results: {} streams, not {}", theirs_.streams.size(), o_.streams));
  s = co_await read_state(step_timeout, "waiting for iperf3's DISPLAY_RESULTS");
  if (s == i3::state::display_results) co_await send_state(i3::state::iperf_done);
  boost::system::error_code ignored;
  control_.shutdown(tcp::socket::shutdown_both, ignored);
}

// The server's own output (-J: its JSON; its text says neither): its version, and its data socket's
// buffer as the kernel granted it ("start": sndbuf_actual, rcvbuf_actual, since iperf3 3.1).
void iperf3_client::read_server_output(const nlohmann::json& out) {
  const auto start = out.find("start");
  if (start == out.end() || !start->is_object()) return;
  if (const auto v = start->find("version"); v != start->end() && v->is_string()) {
    std::string name = v->get<std::string>();  // "iperf 3.12"
    if (name.rfind("iperf ", 0) == 0) name = "iperf3 " + name.substr(6);
    counted_by_ = name;
  }
  const auto b = start->find(o_.reverse ? "sndbuf_actual" : "rcvbuf_actual");
  if (b != start->end() && b->is_number_integer() && b->get<std::int64_t>() > 0 &&
      b->get<std::int64_t>() <= std::numeric_limits<std::int32_t>::max())
    peer_buffer_ = static_cast<std::int32_t>(b->get<std::int64_t>());
}

test_result run_iperf3_test(asio::io_context& io, const client_options& options, client_events events) {
  const std::function<int()> stop_before = events.stop_before;
  return run_to_end(io, std::make_shared<iperf3_client>(io, options, std::move(events)), options, stop_before);
}

}  // namespace nb::load
