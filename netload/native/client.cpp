#include "netload/native/client.hpp"

#include "core/base/clock.hpp"
#include "core/base/version.hpp"
#include "core/host/host_info.hpp"
#include "core/wire/native/auth.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <charconv>

namespace nb::load {

using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;

namespace {

std::chrono::nanoseconds seconds(double s) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s));
}

// Before 1.0 the protocol changes with the minor version.
void check_server_version(const std::string& server) {
  auto major_minor = [](const std::string& v) { return v.substr(0, v.find('.', v.find('.') + 1)); };
  if (major_minor(server) != major_minor(version))
    throw std::runtime_error(
        fmt::format("netserve {} and netload {} speak different protocol versions: run the same "
                    "version on both hosts",
                    server, version));
}

}  // namespace

asio::awaitable<void> connect_within(tcp::socket& s, const tcp::endpoint& to, double timeout_s) {
  asio::steady_timer timer(co_await asio::this_coro::executor, seconds(timeout_s));
  auto r = co_await (s.async_connect(to, asio::as_tuple(asio::use_awaitable)) || timer.async_wait(asio::use_awaitable));
  if (r.index() == 1)
    throw std::runtime_error(fmt::format("timed out connecting to {} after {} s", to.address().to_string(), timeout_s));
  if (auto [ec] = std::get<0>(r); ec)
    throw std::runtime_error(
        fmt::format("cannot connect to {} port {}: {}", to.address().to_string(), to.port(), ec.message()));
}

load_test::load_test(asio::io_context& io, client_options options, client_events events)
    : io_(io),
      o_(std::move(options)),
      events_(std::move(events)),
      control_(io),
      streams_(o_.streams, !o_.reverse, o_.kind, o_.message_size) {}

client_test::client_test(asio::io_context& io, client_options options, client_events events)
    : load_test(io, std::move(options), std::move(events)),
      psk_(o_.psk_file.empty() ? std::string() : read_psk_file(o_.psk_file)) {}

void client_test::bind_local(tcp::socket& s, const tcp::endpoint& to) const {
  s.open(to.protocol());
  if (o_.local_address.empty()) return;
  boost::system::error_code ec;
  s.bind(tcp::endpoint(asio::ip::make_address(o_.local_address, ec), 0), ec);
  if (ec)
    throw std::runtime_error(fmt::format("cannot send from local address {}: {}", o_.local_address, ec.message()));
}

std::chrono::steady_clock::duration client_test::handshake_left() const {
  return std::max(handshake_deadline_ - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration::zero());
}

asio::awaitable<void> client_test::connect_control() {
  handshake_deadline_ = std::chrono::steady_clock::now() + seconds(o_.connect_timeout_s);
  server_ = endpoint::resolve(o_.host, o_.port, o_.family);
  tcp::endpoint to(asio::ip::make_address(server_.address()), o_.port);
  bind_local(control_, to);
  co_await connect_within(control_, to, o_.connect_timeout_s);
  control_.set_option(tcp::no_delay(true));
  control_mac_ = co_await authenticate(control_);
}

asio::awaitable<frame_mac> client_test::authenticate(tcp::socket& s) {
  if (psk_.empty()) co_return frame_mac{};
  co_return co_await answer_challenge(s, psk_, std::chrono::duration_cast<std::chrono::nanoseconds>(handshake_left()));
}

void client_test::open_udp_sockets() {
  // From the control connection's address, so the server can attribute the data.
  endpoint local = endpoint::local_of(control_.native_handle());
  local.set_port(0);
  for (std::uint32_t s = 0; s < o_.streams; ++s) {
    local_buffer_granted_ = open_udp_data_socket(o_, server_, local, streams_[s]);
    const int fd = streams_[s].fd.get();
    // 0 after any route change; DF still fails an oversized send.
    path_mtu_ = path_mtu(fd, server_.family());
    int room = max_udp_payload(path_mtu_, server_.family());
    if (path_mtu_ > 0 && static_cast<int>(o_.message_size) > room)
      throw std::runtime_error(
          fmt::format("message of {} bytes does not fit the path MTU {} to {} (largest UDP payload {}); "
                      "netload does not fragment",
                      o_.message_size, path_mtu_, server_.address(), room));
  }
}

test_request client_test::make_request() const {
  test_request r;
  name_test(r, o_);
  r.duration_s = o_.duration_s;
  r.pps = o_.target_pps();
  for (std::uint32_t s = 0; s < o_.streams && is_udp(o_.kind); ++s)
    r.data_ports.push_back(endpoint::local_of(streams_[s].fd.get()).port());
  r.rcvbuf = o_.reverse ? 0 : o_.remote_buffer;
  r.sndbuf = o_.reverse ? o_.remote_buffer : 0;
  r.cpu = o_.remote_cpu;
  r.dscp = o_.dscp;
  r.mss = o_.mss;
  r.segmentation = std::string(to_string(o_.gso));
  r.interval_s = o_.interval_s;
  r.recv_size = o_.reverse ? 0 : o_.recv_size;
  r.congestion = o_.congestion;
  r.zerocopy = o_.reverse && o_.zerocopy;
  r.send_copy = o_.reverse && o_.send_copy;
  r.recv_copy = !o_.reverse && o_.recv_copy;
  r.client_version = version;
  r.response_size = o_.response_size;
  r.burst = o_.burst;
  return r;
}

asio::awaitable<void> client_test::open_tcp_streams() {
  tcp::endpoint to(asio::ip::make_address(server_.address()), o_.port);
  for (std::uint32_t s = 0; s < o_.streams; ++s) {
    tcp::socket sock(io_);
    bind_local(sock, to);
    // Before connect: the window scale and the SYN's MSS are fixed at the handshake.
    if (o_.mss) set_tcp_mss(sock.native_handle(), static_cast<int>(o_.mss));
    if (!o_.congestion.empty()) set_tcp_congestion(sock.native_handle(), o_.congestion);
    if (o_.local_buffer > 0) {
      local_buffer_granted_ = o_.reverse ? set_recv_buffer(sock.native_handle(), o_.local_buffer)
                                         : set_send_buffer(sock.native_handle(), o_.local_buffer);
    }
    co_await connect_within(sock, to, o_.connect_timeout_s);
    frame_mac mac = co_await authenticate(sock);
    if (o_.dscp >= 0) set_dscp(sock.native_handle(), server_.family(), o_.dscp);
    // TCP_RR: Nagle would hold a request while an earlier one waits for its acknowledgement.
    if (o_.kind == test_kind::tcp_rr) sock.set_option(tcp::no_delay(true));
    std::string token = mac.keyed() ? data_token(control_mac_.key(), mac, ready_.cookie, s) : std::string();
    const message hello = data_hello{ready_.cookie, s, std::move(token)};
    co_await write_message(sock, mac, hello);
    fd_handle fd = release_blocking(sock);
    mss_ = tcp_mss(fd.get());
    path_mtu_ = path_mtu(fd.get(), server_.family());
    if (o_.local_buffer <= 0) local_buffer_granted_ = o_.reverse ? recv_buffer(fd.get()) : send_buffer(fd.get());
    streams_[s].fd = std::move(fd);
  }
}

void client_test::start_threads() {
  for (std::uint32_t s = 0; s < o_.streams; ++s) {
    stream_plan plan = common_stream_plan(o_, streams_[s].fd.get(), s, start_wall_ns_);
    plan.response_size = o_.response_size;
    plan.burst = o_.burst;
    streams_.start(s, plan);
  }
}

receive_figures resolve_receive(client_options& o, int control) {
  const receive_figures f = choose_receive(o.receive, {held_by_this_host(endpoint::peer_of(control)), o.streams});
  o.recv_copy = f.mode == "copy";
  return f;
}

segmentation_figures resolve_gso(client_options& o, const endpoint& peer, const endpoint& source) {
  const segmentation_figures f = resolve_segmentation(o.gso, peer, source, o.message_size);
  o.send_gso = f.mode == "gso";
  return f;
}

stream_plan common_stream_plan(const client_options& o, int fd, std::uint32_t stream, std::int64_t start_wall_ns) {
  stream_plan plan;
  plan.fd = fd;
  plan.message_size = o.message_size;
  plan.pps = o.target_pps() / o.streams;
  plan.start_wall_ns = start_wall_ns;
  plan.duration_ns = s_to_ns(o.duration_s);
  plan.batch = o.batch ? o.batch : default_batch(o.message_size);
  plan.gso = o.send_gso;
  plan.gro = o.gro;
  plan.cpu = o.local_cpu >= 0 ? o.local_cpu + static_cast<int>(stream) : -1;
  plan.recv_size = o.recv_size;
  plan.recv_copy = o.recv_copy;
  plan.send_call = o.zerocopy ? tcp_send_call::zerocopy : o.send_copy ? tcp_send_call::copy : tcp_send_call::sendfile;
  return plan;
}

int open_udp_data_socket(const client_options& o, const endpoint& server, const endpoint& local, data_stream& st) {
  st.fd = connect_udp(server, local);
  const int fd = st.fd.get();
  set_dont_fragment(fd, server.family());
  if (o.dscp >= 0) set_dscp(fd, server.family(), o.dscp);
  if (!o.reverse) return o.local_buffer > 0 ? set_send_buffer(fd, o.local_buffer) : send_buffer(fd);
  const int granted = set_recv_buffer(fd, o.local_buffer > 0 ? o.local_buffer : 4 << 20);
  st.drops_at_start = static_cast<std::uint32_t>(socket_drops(fd));
  return granted;
}

// 25 s: under netserve's 30-s wait for the start message.
asio::awaitable<std::pair<std::int64_t, std::int64_t>> read_start_line(asio::io_context& io,
                                                                       const std::function<void()>& armed) {
  if (armed) armed();
  asio::posix::stream_descriptor in(io);
  boost::system::error_code ec;
  // Asio sets O_NONBLOCK, which the dup shares with stdin: restored, so a terminal is left as it was.
  const int flags = ::fcntl(STDIN_FILENO, F_GETFL);
  struct restore {
    int flags;
    ~restore() {
      if (flags >= 0) ::fcntl(STDIN_FILENO, F_SETFL, flags);
    }
  } restore_stdin{flags};
  in.assign(::dup(STDIN_FILENO), ec);
  if (ec)
    throw std::runtime_error(fmt::format("--start-on-stdin: standard input cannot be read here: {}", ec.message()));
  std::string line;
  asio::steady_timer timer(io, 25s);
  auto r =
      co_await (asio::async_read_until(in, asio::dynamic_buffer(line), '\n', asio::as_tuple(asio::use_awaitable)) ||
                timer.async_wait(asio::use_awaitable));
  if (r.index() == 1) throw std::runtime_error("--start-on-stdin: no start instant within 25 s");
  if (auto [read_ec, n] = std::get<0>(r); read_ec)
    throw std::runtime_error("--start-on-stdin: standard input closed before a start instant came");
  co_return parse_start_line(line.substr(0, line.find('\n')));
}

std::pair<std::int64_t, std::int64_t> parse_start_line(std::string_view line) {
  // S: from a harness that knows the clocks' offset (--allow-offset).
  const char* p = line.data();
  const char* end = line.data() + line.size();
  double at[2] = {0, 0};
  int given = 0;
  while (given < 2 && p < end) {
    auto [stop, e] = std::from_chars(p, end, at[given]);
    if (e != std::errc() || !(at[given] > 0 && at[given] < 1e11)) break;
    ++given;
    p = stop < end && *stop == ' ' ? stop + 1 : stop;
  }
  if (given == 0 || p != end)
    throw std::runtime_error(
        fmt::format("--start-on-stdin: '{}' is not a start instant (epoch seconds, optionally "
                    "followed by the same instant on the server's clock)",
                    line.substr(0, 40)));
  return {static_cast<std::int64_t>(at[0] * 1e9), static_cast<std::int64_t>(at[given - 1] * 1e9)};
}

asio::awaitable<std::int64_t> client_test::read_start_instant() {
  const auto [at, server_at] = co_await read_start_line(io_, events_.armed);
  server_start_ns_ = server_at;
  co_return at;
}

asio::awaitable<void> client_test::run() {
  co_await connect_control();
  if (o_.kind == test_kind::tcp_stream) receive_ = resolve_receive(o_, control_.native_handle());
  if (is_udp(o_.kind)) open_udp_sockets();
  if (o_.kind == test_kind::udp_stream && !o_.reverse)
    segmentation_ = resolve_gso(o_, server_, endpoint::local_of(streams_[0].fd.get()));
  const message request = make_request();
  co_await write_message(control_, control_mac_, request);
  try {
    ready_ = co_await expect_message<ready_msg>(control_, control_mac_, handshake_left());
  } catch (const protocol_error&) {
    if (handshake_left() == std::chrono::steady_clock::duration::zero())  // not a bad message
      throw std::runtime_error(
          fmt::format("{} port {} accepted the connection but did not answer within --connect-timeout {:g} s: "
                      "is a netserve listening there?",
                      server_.address(), o_.port, o_.connect_timeout_s));
    throw;
  }
  check_server_version(ready_.server_version);
  if (o_.kind == test_kind::udp_stream && o_.reverse)
    segmentation_ = segmentation_figures{ready_.segmentation, o_.gso == gso_mode::automatic, ready_.segmentation_why};
  if (is_tcp(o_.kind)) co_await open_tcp_streams();

  std::optional<start_instant> shared;
  if (events_.arrive) shared = co_await events_.arrive();
  if (shared) requested_start_ns_ = shared->requested_ns, server_start_ns_ = shared->server_ns;
  else if (o_.start_on_stdin) requested_start_ns_ = co_await read_start_instant();
  else if (o_.start_at) requested_start_ns_ = static_cast<std::int64_t>(*o_.start_at * 1e9);
  start_wall_ns_ = shared ? shared->wall_ns : requested_start_ns_ ? requested_start_ns_ : wall_ns() + 10'000'000;
  if (!shared && events_.chosen) events_.chosen({requested_start_ns_, start_wall_ns_, server_start_ns_});
  // A past instant would start out of step with the other instances. No tolerance: a thread waking
  // late paces from its wake-up.
  if (std::int64_t late = wall_ns() - start_wall_ns_; requested_start_ns_ && late > 0)
    throw std::runtime_error(
        fmt::format("start instant {:.3f} s in the past ({:.6f}): refused; give an instant in the future",
                    ns_to_s(late), ns_to_s(requested_start_ns_)));
  const message start = start_msg{server_instant()};
  co_await write_message(control_, control_mac_, start);
  start_threads();
  traffic_started(start_wall_ns_ + s_to_ns(o_.duration_s));
  // The server first: when both fail `&&` reports the first, and a server gone is the cause.
  auto result = co_await (read_server() && local_side());
  server_final_ = std::move(result);
  emit_intervals(true);
}

}  // namespace nb::load
