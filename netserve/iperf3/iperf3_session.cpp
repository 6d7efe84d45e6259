#include "netserve/iperf3/iperf3_session.hpp"

#include "core/base/clock.hpp"
#include "core/base/text.hpp"
#include "core/data/rr.hpp"
#include "core/wire/native/frame_io.hpp"
#include "netserve/server/request_checks.hpp"

#include <fmt/format.h>

#include <sys/resource.h>

namespace nb::serve {

using namespace std::chrono_literals;
namespace i3 = iperf3;

namespace {

constexpr auto step_timeout = 30s;    // each exchange: parameters, streams, results
constexpr auto test_end_grace = 60s;  // for TEST_END after the test's end

double cpu_seconds(bool user) {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const timeval& t = user ? u.ru_utime : u.ru_stime;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

// 1, 3, 4, 5 ... across both directions of --bidir, as iperf_add_stream numbers them.
std::int64_t stream_id(std::size_t overall) { return overall == 0 ? 1 : static_cast<std::int64_t>(overall) + 2; }

// However collect_hellos ends.
struct hello_claim {
  udp_port& port;
  const std::string& cookie;
  ~hello_claim() { port.stop_expecting(cookie); }
};

}  // namespace

asio::awaitable<void> serve_iperf3(tcp::socket socket, std::shared_ptr<served_port> port,
                                   std::shared_ptr<server_shared> shared, budget::hold unit,
                                   std::optional<per_client_count::hold> window) {
  std::string peer = "?";
  try {
    peer = socket.remote_endpoint().address().to_string();
    const auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(shared->options.first_message_timeout_s));
    std::string cookie(i3::cookie_size, '\0');
    co_await read_exact(socket, asio::buffer(cookie), timeout, "waiting for an iperf3 cookie");
    window.reset();
    if (!i3::is_cookie(cookie)) throw protocol_error("neither a netload frame nor an iperf3 cookie");
    if (auto it = port->iperf3_sessions.find(cookie); it != port->iperf3_sessions.end()) {
      if (const attach_refusal why = it->second->attach_stream(socket)) {
        fmt::print(stderr, "netserve: port {}: iperf3 data connection from {} refused: {}\n", port->number, peer, *why);
        const signed char denied = static_cast<signed char>(i3::state::access_denied);
        boost::system::error_code ignored;
        socket.write_some(asio::buffer(&denied, 1), ignored);
      }
      co_return;
    }
    auto session =
        std::make_shared<iperf3_session>(std::move(socket), std::move(cookie), port, shared, std::move(unit));
    co_await session->run();
  } catch (const protocol_error& e) {
    fmt::print(stderr, "netserve: port {}: closing connection from {}: {}\n", port->number, peer,
               printable_bounded(e.what()));
  } catch (const std::exception& e) {
    fmt::print(stderr, "netserve: port {}: iperf3 connection from {} failed: {}\n", port->number, peer,
               printable_bounded(e.what()));
  }
}

iperf3_session::iperf3_session(tcp::socket socket, std::string cookie, std::shared_ptr<served_port> port,
                               std::shared_ptr<server_shared> shared, budget::hold unit)
    : unit_(std::move(unit)),
      socket_(std::move(socket)),
      cookie_(std::move(cookie)),
      port_(std::move(port)),
      shared_(std::move(shared)) {
  peer_ = socket_.remote_endpoint().address().to_string();
  client_ = client_of(socket_.remote_endpoint().address());
  // From its first read: a later connection with it is a stream or refused, never a second session.
  port_->iperf3_sessions.emplace(cookie_, this);
}

iperf3_session::~iperf3_session() {
  if (auto it = port_->iperf3_sessions.find(cookie_); it != port_->iperf3_sessions.end() && it->second == this)
    port_->iperf3_sessions.erase(it);
  for (const auto& t : tests_) port_->remove(*t, client_);
}

attach_refusal iperf3_session::attach_stream(tcp::socket& socket) {
  if (!accepting_streams_) return "its cookie is a session's that takes no streams now (one cookie, one session)";
  for (const auto& t : tests_) {
    if (!is_tcp(t->request().kind)) return "a TCP connection for a UDP test";
    if (t->all_data_attached()) continue;
    return t->attach_next_tcp(release_blocking(socket));
  }
  return "every stream of the test is connected already";
}

asio::awaitable<void> iperf3_session::send_state(i3::state s) {
  const auto byte = static_cast<signed char>(s);
  co_await write_frame(socket_, std::string(1, static_cast<char>(byte)), 10s);
}

asio::awaitable<void> iperf3_session::refuse(const refusal& r) {
  fmt::print(stderr, "netserve: port {}: iperf3 test from {} refused: {}\n", port_->number, peer_,
             printable_bounded(r.why));
  std::string out(1, static_cast<char>(static_cast<signed char>(r.state)));
  if (r.state == i3::state::server_error) {  // the code, then errno 0, big-endian
    const auto code = static_cast<std::uint32_t>(r.code);
    const char bytes[8] = {static_cast<char>(code >> 24),
                           static_cast<char>(code >> 16),
                           static_cast<char>(code >> 8),
                           static_cast<char>(code),
                           0,
                           0,
                           0,
                           0};
    out.append(bytes, 8);
  }
  co_await write_frame(socket_, std::move(out), 10s);
}

asio::awaitable<std::string> iperf3_session::read_json(const char* what) {
  unsigned char header[4];
  co_await read_exact(socket_, asio::buffer(header), step_timeout, what);
  std::string body(i3::decode_length(header), '\0');
  co_await read_exact(socket_, asio::buffer(body), step_timeout, what);
  co_return body;
}

// As netload's tests; refused with ACCESS_DENIED, "the server is busy".
std::optional<iperf3_session::refusal> iperf3_session::register_tests() {
  const server_options& o = shared_->options;
  served_port& p = *port_;
  const endpoint peer = endpoint::peer_of(socket_.native_handle()), local = endpoint::local_of(socket_.native_handle());
  for (test_request& r : requests_) {
    auto busy = [](std::string why) {
      return refusal{i3::state::access_denied, i3::error::unimplemented, std::move(why)};
    };
    if (p.running() >= o.max_tests_per_port)
      return busy(fmt::format("port {} already runs {} tests", p.number, p.running()));
    if (const std::uint64_t share = shared_->process_budget->share_of(o.max_tests_per_port);
        p.tests_of_client[client_] >= share)
      return busy(fmt::format("port {} already runs {} tests from this client", p.number, share));
    // Refused now, where the client hears it.
    try {
      check_data_peer(r, peer_of_test(r, peer, *shared_->own_ports));
    } catch (const protocol_error& e) {
      return refusal{i3::state::server_error, i3::error::unimplemented, e.what()};
    }
    std::string why;
    auto held = shared_->process_budget->try_take(client_, cost_of(r), why);
    if (!held) return busy(why);
    budgets_.push_back(std::move(held));
    r.rcvbuf = std::min(r.rcvbuf, o.max_socket_buffer);
    r.sndbuf = std::min(r.sndbuf, o.max_socket_buffer);
    // A suffix no iperf3 cookie has.
    const std::string key = tests_.empty() ? cookie_ : cookie_ + "/reverse";
    auto t = std::make_shared<served_test>(++shared_->tests_registered, key, r, peer, local, p.udp, shared_->own_ports,
                                           o.xdp);
    t->set_payload(params_.udp_counters_64bit ? payload_format::iperf3_64 : payload_format::iperf3_32);
    if (!p.add(t, client_)) return busy(fmt::format("its cookie is another test's on port {}", p.number));
    tests_.push_back(std::move(t));
  }
  return std::nullopt;
}

asio::awaitable<void> iperf3_session::run() {
  try {
    co_await send_state(i3::state::param_exchange);
    params_ = i3::parse_params(co_await read_json("reading iperf3 parameters"));
    std::optional<refusal> no = check(params_);
    if (!no) no = plan_tests();
    if (!no) no = register_tests();
    if (no) {
      co_await refuse(*no);
      co_return;
    }
    if (std::optional<refusal> failed = co_await set_up_streams()) {
      co_await refuse(*failed);
      co_return;
    }
    co_await send_state(i3::state::test_start);
    co_await send_state(i3::state::test_running);
    const std::int64_t start_mono = mono_ns(), start = wall_ns();
    for (const auto& t : tests_) t->start(start);
    const double user0 = cpu_seconds(true), system0 = cpu_seconds(false);
    const bool ended = co_await await_test_end();
    const double seconds = ns_to_s(mono_ns() - start_mono);
    co_await settle();
    if (!ended) {  // CLIENT_TERMINATE: what was counted is still logged
      for (std::size_t k = 0; k < tests_.size(); ++k)
        fmt::print(stderr, "{} (ended by the client)\n", result_line(k, seconds));
      co_return;
    }
    cpu_user_s_ = cpu_seconds(true) - user0;
    cpu_system_s_ = cpu_seconds(false) - system0;
    co_await exchange_results(seconds);
  } catch (const protocol_error& e) {
    fmt::print(stderr, "netserve: port {}: closing iperf3 connection from {}: {}\n", port_->number, peer_,
               printable_bounded(e.what()));
  } catch (const boost::system::system_error& e) {
    fmt::print(stderr, "netserve: port {}: iperf3 connection from {} lost: {}\n", port_->number, peer_,
               e.code().message());
  } catch (const std::exception& e) {
    fmt::print(stderr, "netserve: port {}: iperf3 connection from {} failed: {}\n", port_->number, peer_,
               printable_bounded(e.what()));
  }
}

// A failure is told as iperf3's server tells it, "unable to accept stream connection", not left to a timeout.
asio::awaitable<std::optional<iperf3_session::refusal>> iperf3_session::set_up_streams() {
  std::string why;
  try {
    co_await create_streams();
    for (const auto& t : tests_)
      if (is_udp(t->request().kind) && !t->request().reverse) t->attach_udp();
    co_return std::nullopt;
  } catch (const protocol_error& e) {
    why = e.what();
  } catch (const boost::system::system_error&) {  // the client is gone
    throw;
  } catch (const std::runtime_error& e) {  // XDP cannot count the flows
    why = e.what();
  }
  co_return refusal{i3::state::server_error, i3::error::stream_accept, why};
}

asio::awaitable<void> iperf3_session::create_streams() {
  if (params_.udp) co_return co_await collect_hellos();
  accepting_streams_ = true;
  co_await send_state(i3::state::create_streams);
  for (int i = 0; i < 1000; ++i) {
    bool all = true;
    for (const auto& t : tests_) all = all && t->all_data_attached();
    if (all) break;
    co_await sleep_for(10ms);
  }
  accepting_streams_ = false;
  for (const auto& t : tests_)
    if (!t->all_data_attached()) throw protocol_error("not every iperf3 TCP stream arrived within 10 s");
}

asio::awaitable<void> iperf3_session::collect_hellos() {
  served_port& p = *port_;
  const endpoint peer = endpoint::peer_of(socket_.native_handle()), local = endpoint::local_of(socket_.native_handle());
  std::size_t streams = 0;
  for (const auto& t : tests_) streams += t->request().streams;
  hello_claim claim{*p.udp, cookie_};
  // One session per client address at a time: a hello says nothing of its test.
  for (int i = 0; !p.udp->expect_hellos(cookie_, peer, streams, wall_ns()); ++i) {
    if (i == 2000) throw protocol_error("another test of this client kept the port's UDP streams busy for 10 s");
    co_await sleep_for(5ms);
  }
  // Idle lanes start behind whatever queued meanwhile: announce once there is room for the hellos.
  for (int i = 0; i < 500 && !p.udp->has_room(); ++i) co_await sleep_for(2ms);
  co_await send_state(i3::state::create_streams);
  for (const auto& t : tests_) {
    const data_peer to = peer_of_test(t->request(), peer, *shared_->own_ports);
    std::vector<std::uint16_t> ports;
    while (ports.size() < t->request().streams) {
      std::optional<endpoint> hello;
      for (int i = 0; !(hello = p.udp->take_hello(cookie_)); ++i) {
        if (i == 5000) throw protocol_error("an iperf3 UDP stream did not announce itself within 10 s");
        co_await sleep_for(2ms);
      }
      // Where the answer and reverse datagrams go.
      test_request one = t->request();
      one.data_ports = {hello->port()};
      check_data_peer(one, to);
      const std::uint32_t reply = i3::udp_connect_reply;
      udp_answerer answer(*hello, local);
      bool sent = false;
      for (int i = 0; i < 50 && !(sent = answer.send(p.udp->fd(), reinterpret_cast<const unsigned char*>(&reply), 4));
           ++i)
        co_await sleep_for(2ms);
      if (!sent) throw protocol_error("cannot answer an iperf3 UDP stream's hello");
      ports.push_back(hello->port());
    }
    t->set_data_ports(std::move(ports));
  }
}

// False when the client ended otherwise (logged).
asio::awaitable<bool> iperf3_session::await_test_end() {
  const double duration = params_.time > 0 ? static_cast<double>(params_.time) : shared_->options.max_duration_s;
  const auto timeout =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(duration)) + test_end_grace;
  signed char s = 0;
  co_await read_exact(socket_, asio::buffer(&s, 1), timeout, "waiting for iperf3's TEST_END");
  for (const auto& t : tests_) t->stop_sending();
  if (s == static_cast<signed char>(i3::state::test_end)) co_return true;
  fmt::print(stderr, "netserve: port {}: iperf3 client {} ended its test with state {}\n", port_->number, peer_,
             int{s});
  co_return false;
}

// In-flight data arrives, senders end; then the streams are read once, for both the client and the log.
asio::awaitable<void> iperf3_session::settle() {
  const server_options& o = shared_->options;
  const std::int64_t quiet = s_to_ns(o.drain_quiet_s), give_up = mono_ns() + s_to_ns(o.drain_max_s);
  std::uint64_t last_bytes = ~0ULL;
  std::int64_t last_change = mono_ns();
  while (mono_ns() < give_up) {
    bool done = true;
    std::uint64_t bytes = 0;
    for (const auto& t : tests_) {
      const test_request& r = t->request();
      if (r.reverse) done = done && t->finished();
      else if (is_udp(r.kind)) done = done && t->drained(quiet);
      std::uint64_t packets = 0, b = 0;
      t->totals(packets, b);
      bytes += b;
    }
    if (bytes != last_bytes) last_change = mono_ns(), last_bytes = bytes;
    if (done && mono_ns() - last_change >= quiet) break;
    co_await sleep_for(5ms);
  }
  for (const auto& t : tests_) {
    totals_.push_back(t->stream_totals());
    counts_.push_back(t->finish());
  }
}

// From the figures the client gets, so it says exactly those.
std::string iperf3_session::result_line(std::size_t k, double seconds) const {
  const served_test& t = *tests_[k];
  side_counts c = counts_[k];
  c.packets = c.bytes = 0;
  for (const flow_totals& f : totals_[k]) {
    c.packets += f.packets;
    c.bytes += f.bytes;
  }
  if (is_tcp(t.request().kind)) c.packets = tcp_messages(c.bytes, t.request().message_size);
  return test_result_line(port_->number, t, c, t.unattributed_since_start(), seconds,
                          "iperf3 " + params_.client_version);
}

// Theirs, ours, DISPLAY_RESULTS (iperf_exchange_results); IPERF_DONE only briefly, as a courtesy.
asio::awaitable<void> iperf3_session::exchange_results(double seconds) {
  co_await send_state(i3::state::exchange_results);
  const i3::results theirs = i3::parse_results(co_await read_json("reading iperf3's results"));
  i3::results ours;
  // As iperf3's cpu_util.
  ours.cpu_util_user = 100.0 * cpu_user_s_ / seconds;
  ours.cpu_util_system = 100.0 * cpu_system_s_ / seconds;
  ours.cpu_util_total = ours.cpu_util_user + ours.cpu_util_system;
  const bool tcp = params_.tcp, sends = params_.reverse || params_.bidirectional;
  ours.sender_has_retransmits = sends ? (tcp ? 1 : 0) : -1;
  std::string lines;
  std::size_t overall = 0;
  for (std::size_t k = 0; k < tests_.size(); ++k) {
    const served_test& t = *tests_[k];
    const bool reverse = t.request().reverse;
    const std::vector<tcp_sample> samples = reverse && tcp ? t.tcp_end_samples() : std::vector<tcp_sample>{};
    for (std::size_t s = 0; s < totals_[k].size(); ++s, ++overall) {
      const flow_totals& f = totals_[k][s];
      i3::stream_result r;
      r.id = stream_id(overall);
      r.bytes = f.bytes;
      r.end_time = seconds;
      if (!tcp) r.packets = f.packets;
      if (reverse) {
        if (s < samples.size() && samples[s].retransmits)
          r.retransmits = static_cast<std::int64_t>(*samples[s].retransmits);
        else if (tcp) r.retransmits = 0;
      } else if (!tcp) {
        r.jitter = f.sequenced > 1 ? f.jitter_ns / 1e9 : 0;
        // What the client sent that did not arrive: iperf3's server misses a lost tail.
        for (const i3::stream_result& x : theirs.streams)
          if (x.id == r.id && x.packets > f.packets) r.errors = x.packets - f.packets;
      }
      ours.streams.push_back(r);
    }
    if (reverse && tcp) ours.congestion_used = t.congestion();
    const std::string line = result_line(k, seconds);
    fmt::print(stderr, "{}\n", line);
    lines += line + "\n";
  }
  if (params_.get_server_output) ours.server_output_text = lines;
  co_await write_frame(socket_, i3::frame(i3::encode_results(ours)), 10s);
  co_await send_state(i3::state::display_results);
  signed char done = 0;
  try {
    co_await read_exact(socket_, asio::buffer(&done, 1), 5s, "waiting for iperf3's IPERF_DONE");
  } catch (const std::exception&) {  // gone without it
  }
}

}  // namespace nb::serve
