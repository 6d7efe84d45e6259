#include "netserve/server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/clock.hpp"
#include "core/limits.hpp"
#include "core/version.hpp"

namespace nb::serve {

server::server(asio::io_context& io, server_options options)
    : io_(io), options_(std::move(options)), budget_(budget::create(options_.budget)) {}

void server::bind_port(port_state& p, std::uint16_t wanted) {
  // With port 0 the kernel picks the TCP port; the UDP socket must then get the same number, which
  // another program may hold: try again with a new number a few times.
  for (int attempt = 0; attempt < 50; ++attempt) {
    endpoint local = endpoint::from_numeric(options_.bind, wanted);
    auto acceptor = std::make_unique<tcp::acceptor>(io_);
    tcp::endpoint tep(asio::ip::make_address(options_.bind), wanted);
    acceptor->open(tep.protocol());
    acceptor->set_option(tcp::acceptor::reuse_address(true));
    if (tep.address().is_v6()) acceptor->set_option(asio::ip::v6_only(false));
    boost::system::error_code ec;
    acceptor->bind(tep, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot bind TCP port {} on {}: {}", wanted, options_.bind, ec.message()));
    acceptor->listen(asio::socket_base::max_listen_connections);
    std::uint16_t number = acceptor->local_endpoint().port();
    local.set_port(number);
    try {
      int rcvbuf = options_.rcvbuf > 0 ? options_.rcvbuf : default_rcvbuf(options_.rx_cpus.size());
      std::vector<udp_lane> lanes = bind_lanes(local, options_.rx_cpus, rcvbuf);
      p.number = number;
      p.acceptor = std::move(acceptor);
      p.udp = std::make_shared<udp_port>(std::move(lanes), options_.gro);
      return;
    } catch (const std::system_error& e) {
      // Only a taken number is worth another try; anything else (out of descriptors, a refused
      // option) would fail again.
      if (wanted != 0 || e.code() != std::errc::address_in_use)
        throw std::runtime_error(fmt::format("cannot bind UDP port {} on {}: {}", number, options_.bind, e.what()));
    }
  }
  throw std::runtime_error("cannot find a port free for both TCP and UDP");
}

void server::bind() {
  for (auto wanted : options_.ports) {
    auto p = std::make_shared<port_state>();
    bind_port(*p, wanted);
    ports_.push_back(std::move(p));
  }
}

std::string server::ready_line() const {
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& p : ports_) ports.push_back(p->number);
  return nlohmann::json{{"event", "ready"}, {"program", "netserve"}, {"version", version}, {"bind", options_.bind},
                        {"ports", ports}, {"pid", ::getpid()}}
      .dump();
}

void server::start() {
  for (auto& p : ports_)
    asio::co_spawn(io_, accept_loop(p), [n = p->number](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        fmt::print(stderr, "netserve: port {}: accept loop ended: {}\n", n, x.what());
      }
    });
}

void server::stop() {
  for (auto& p : ports_) {
    boost::system::error_code ignored;
    p->acceptor->close(ignored);
  }
}

asio::awaitable<void> server::accept_loop(std::shared_ptr<port_state> port) {
  port_state& p = *port;
  for (;;) {
    auto [ec, socket] = co_await p.acceptor->async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::operation_aborted || !p.acceptor->is_open()) co_return;
    if (ec) {  // EMFILE and the like: log, breathe, keep serving
      fmt::print(stderr, "netserve: port {}: accept: {}\n", p.number, ec.message());
      asio::steady_timer pause(io_, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::use_awaitable);
      continue;
    }
    boost::system::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    if (peer_ec) continue;  // gone already
    const std::string client = client_of(peer.address());
    // Every connection holds a unit of the budget from here to its session's end: silent ones cost a
    // descriptor and a coroutine each for up to --first-message-timeout, and control connections
    // stay open for their whole test.
    std::string why;
    auto held = budget_->try_take(client, budget_cost{0, 0, 0, 1}, why);
    if (!held) {
      log_refused_connection(client, why);
      continue;  // the socket closes here
    }
    socket.set_option(tcp::no_delay(true), peer_ec);
    // The session logs its own failures; nothing escapes it. The handler keeps the connection's unit
    // until the session has ended (or its frame is destroyed at shutdown).
    asio::co_spawn(io_, session(std::move(socket), port),
                   [unit = std::make_shared<budget::hold>(std::move(*held))](std::exception_ptr) {});
  }
}

void server::log_refused_connection(const std::string& client, const std::string& why) {
  // A flood of connections must not become a flood of log lines: one a second, with a count.
  ++refusals_unlogged_;
  const std::int64_t now = mono_ns();
  if (now - refusal_logged_ns_ < 1'000'000'000) return;
  fmt::print(stderr, "netserve: refused {} connection(s), the last from {}: {}\n", refusals_unlogged_, client, why);
  refusal_logged_ns_ = now;
  refusals_unlogged_ = 0;
}

void server::validate(const test_request& r) const {
  auto reject = [](std::string why) { throw protocol_error("rejected: " + why); };
  if (!(r.duration_s > 0) || r.duration_s > options_.max_duration_s)
    reject(fmt::format("duration {} s is outside (0, {}]", r.duration_s, options_.max_duration_s));
  if (r.streams < 1 || r.streams > options_.max_streams)
    reject(fmt::format("{} streams is outside [1, {}]", r.streams, options_.max_streams));
  if (r.message_size < 1) reject("message size must be at least 1 byte");
  if (r.kind == test_kind::udp_stream) {
    if (r.message_size > max_udp_message_size)
      reject(fmt::format("UDP message size {} exceeds {}", r.message_size, max_udp_message_size));
    if (r.data_ports.size() != r.streams) reject("one data port per stream is required");
    for (auto port : r.data_ports)
      if (port == 0) reject("data port 0");
  } else if (r.message_size > max_tcp_message_size) {
    reject(fmt::format("TCP message size exceeds {} MiB", max_tcp_message_size >> 20));
  }
  // What a test may make this process hold in buffers: reverse TCP keeps one message per stream.
  if (r.reverse && r.kind == test_kind::tcp_stream && std::uint64_t{r.message_size} * r.streams > (64u << 20))
    reject("streams x message size exceeds 64 MiB");
  if (!(r.pps >= 0) || r.pps > 1e10) reject("bad packet rate");
  if (r.interval_s != 0 && !(r.interval_s >= min_interval_s && r.interval_s <= r.duration_s))
    reject(fmt::format("interval must be 0 or between {:g} s and the duration", min_interval_s));
  if (r.dscp < -1 || r.dscp > max_dscp) reject(fmt::format("DSCP outside 0..{}", max_dscp));
  if (r.cpu < -1 || r.cpu > 4095) reject("bad CPU number");
  if (r.rcvbuf < 0 || r.sndbuf < 0 || r.rcvbuf > max_socket_buffer_request || r.sndbuf > max_socket_buffer_request)
    reject("bad socket buffer size");
  if (r.mss != 0 && (r.mss < min_mss || r.mss > max_mss)) reject(fmt::format("MSS outside {}..{}", min_mss, max_mss));
}

// The socket by reference: a refused one is still the session's, which tells the client why.
void server::attach_data(tcp::socket& socket, port_state& p, const data_hello& hello, const frame_mac& mac) {
  auto it = p.tests.find(hello.cookie);
  if (it == p.tests.end()) throw protocol_error("data connection names no test on this port");
  // The cookie travels in the clear: with a key, only the token of the test's own client admits.
  if (const std::string& key = it->second->data_key();
      !key.empty() && !constant_time_equal(hello.token, data_token(key, mac, hello.cookie, hello.stream)))
    throw protocol_error("data connection without a valid token for its test");
  if (auto error = it->second->attach_tcp(hello.stream, release_blocking(socket)); !error.empty()) throw protocol_error(error);
}

}  // namespace nb::serve
