#include "netserve/netperf/netperf_session.hpp"

#include "core/base/clock.hpp"
#include "core/base/limits.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/sys/eintr.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/frame_io.hpp"
#include "core/wire/netperf/netperf_wire.hpp"
#include "netserve/netperf/netperf_data.hpp"
#include "netserve/netperf/netperf_exchange.hpp"
#include "netserve/netperf/netperf_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include <netinet/in.h>
#include <sys/socket.h>

namespace nb::serve {

using namespace std::chrono_literals;
namespace np = netperf;

namespace {

constexpr const char* client_name = "netperf 2.7";  // the request layout is 2.7's
constexpr int kernel_port_tries = 8;                // for a kernel-chosen data port a test sends to

// One of `client`'s, while it lives.
class client_count {
 public:
  client_count(std::map<std::string, std::uint64_t>& counts, std::string client)
      : counts_(counts), client_(std::move(client)) {
    ++counts_[client_];
  }
  ~client_count() {
    if (auto it = counts_.find(client_); it != counts_.end() && --it->second == 0) counts_.erase(it);
  }
  client_count(const client_count&) = delete;
  client_count& operator=(const client_count&) = delete;

 private:
  std::map<std::string, std::uint64_t>& counts_;
  std::string client_;
};

class port_slot {
 public:
  port_slot(served_port& port, const std::string& client) : port_(port), of_client_(port.tests_of_client, client) {
    ++port_.netperf_tests;
  }
  ~port_slot() { --port_.netperf_tests; }
  port_slot(const port_slot&) = delete;
  port_slot& operator=(const port_slot&) = delete;

 private:
  served_port& port_;
  client_count of_client_;
};

// Through the process's limiter.
void log_peer(server_shared& shared, const std::string& line) {
  std::uint64_t left_out = 0;
  if (!shared.peer_log.allow(mono_ns(), left_out)) return;
  std::string tail;
  if (left_out > 0)
    tail = fmt::format(" (and {} more lines peers caused, left out before it: {:g} at once, then {:g} a second)",
                       left_out, peer_log_burst, peer_log_per_second);
  fmt::print(stderr, "{}{}\n", line, tail);
}

netperf_exchange_limits limits_of(const server_options& o) {
  netperf_exchange_limits l;
  l.idle_ns = s_to_ns(o.netperf_idle_max_s);
  return l;
}

enum class control_state { quiet, bytes, closed };

class netperf_session {
 public:
  netperf_session(tcp::socket socket, std::shared_ptr<served_port> port, std::shared_ptr<server_shared> shared)
      : socket_(std::move(socket)),
        port_(std::move(port)),
        shared_(std::move(shared)),
        exchange_(limits_of(shared_->options), mono_ns()) {
    peer_ = socket_.remote_endpoint().address().to_string();
    client_ = client_of(socket_.remote_endpoint().address());
  }

  asio::awaitable<void> run();

 private:
  asio::awaitable<void> serve_test(const np::omni_request& r);
  std::optional<netperf_refusal> take_slot(const np::omni_request& r, std::optional<port_slot>& slot,
                                           std::optional<budget::hold>& held);
  fd_handle open_data_socket(const np::omni_request& r, np::omni_setup& setup, port_claim& claim);
  asio::awaitable<void> refuse(std::int32_t type, const netperf_refusal& r);
  // The client's close ends it at once. False when the client sent something meanwhile.
  asio::awaitable<bool> await_data(netperf_data& data);
  control_state control();
  // Throws protocol_error once the deadline has passed.
  std::chrono::nanoseconds time_left() const;
  asio::awaitable<void> send(const np::block& b) {
    co_await write_frame(socket_, std::string(b.begin(), b.end()),
                         std::min<std::chrono::nanoseconds>(10s, time_left()));
  }
  void log_result(std::uint64_t id, const np::omni_request& r, const netperf_counts& c, double seconds) const;

  tcp::socket socket_;
  std::shared_ptr<served_port> port_;
  std::shared_ptr<server_shared> shared_;
  netperf_exchange exchange_;
  std::string peer_, client_;
};

std::chrono::nanoseconds netperf_session::time_left() const {
  const std::int64_t left = exchange_.deadline_ns() - mono_ns();
  if (left <= 0)
    throw protocol_error(fmt::format("the netperf exchange ran past its deadline ({:g} s outside its tests, in all)",
                                     shared_->options.netperf_idle_max_s));
  return std::chrono::nanoseconds(left);
}

asio::awaitable<void> netperf_session::run() {
  const auto first = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(shared_->options.first_message_timeout_s));
  const std::string waiting =
      fmt::format("waiting for a netperf request (the exchange may spend {:g} s outside its tests, in all)",
                  shared_->options.netperf_idle_max_s);
  np::block b{};
  for (;;) {
    const auto wait = exchange_.messages() == 0 ? std::min(first, time_left()) : time_left();
    try {
      co_await read_exact(socket_, asio::buffer(b), wait, waiting.c_str());
    } catch (const boost::system::system_error& e) {
      if (e.code() == asio::error::eof) co_return;  // netperf's shutdown_control
      throw;
    }
    const netperf_exchange::step step = exchange_.on_message(b, mono_ns());
    if (step.what == netperf_exchange::verdict::serve) {
      co_await serve_test(step.request);
    } else if (step.what == netperf_exchange::verdict::refuse) {
      // Not a braced temporary in the co_await: GCC 12 destroys it twice.
      const netperf_refusal no{step.errno_value, step.why};
      co_await refuse(step.type, no);
    }
  }
}

asio::awaitable<void> netperf_session::refuse(std::int32_t type, const netperf_refusal& r) {
  // netperf exits at the first; more end the connection, whose closing line says so.
  if (exchange_.refusals() == 1)
    log_peer(*shared_, fmt::format("netserve: port {}: netperf test from {} refused: {}", port_->number, peer_, r.why));
  co_await send(np::encode_error(type, r.errno_value));
}

std::optional<netperf_refusal> netperf_session::take_slot(const np::omni_request& r, std::optional<port_slot>& slot,
                                                          std::optional<budget::hold>& held) {
  const server_options& o = shared_->options;
  served_port& p = *port_;
  if (p.running() >= o.max_tests_per_port)
    return netperf_refusal{EBUSY, fmt::format("port {} already runs {} tests", p.number, p.running())};
  if (const std::uint64_t share = shared_->process_budget->share_of(o.max_tests_per_port);
      p.tests_of_client[client_] >= share)
    return netperf_refusal{EBUSY, fmt::format("port {} already runs {} tests from this client", p.number, share)};
  const bool udp = r.protocol == np::ipproto_udp, rr = r.direction != np::dir_recv;
  const std::uint64_t bytes = rr    ? static_cast<std::uint64_t>(std::max(r.request_size, r.response_size))
                              : udp ? 128u << 10
                                    : tcp_read_size(r);
  std::string why;
  auto taken = shared_->process_budget->try_take(client_, budget_cost{1, 1, bytes, udp ? 0u : 1u}, why);
  if (!taken) return netperf_refusal{EBUSY, why};
  held.emplace(std::move(*taken));
  slot.emplace(p, client_);
  return std::nullopt;
}

// On the control connection's local address, never at one of netserve's own ports or targets; the port
// joins its own with `claim`. Throws std::system_error.
fd_handle netperf_session::open_data_socket(const np::omni_request& r, np::omni_setup& setup, port_claim& claim) {
  const bool udp = r.protocol == np::ipproto_udp;
  const own_sockets& own = *shared_->own_ports;
  const auto asked = static_cast<std::uint16_t>(r.data_port);
  if (asked != 0 && own.ports.contains(asked))
    throw std::system_error(EADDRINUSE, std::generic_category(), "the data port is one of netserve's own");
  endpoint local = endpoint::local_of(socket_.native_handle());
  local.set_port(asked);
  fd_handle fd;
  for (int tries = 1;; ++tries) {
    fd = udp ? bind_udp(local) : make_socket(local.family(), SOCK_STREAM);
    const int one = 1;
    if (!udp && (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
                 ::bind(fd.get(), local.data(), local.size()) != 0))
      throw std::system_error(errno, std::generic_category(), "binding the data socket");
    setup.data_port = endpoint::local_of(fd.get()).port();
    // A stream aimed at a free port before this socket took it would land here.
    if (!udp || !own.targets.contains(static_cast<std::uint16_t>(setup.data_port))) break;
    if (asked != 0 || tries == kernel_port_tries)
      throw std::system_error(EADDRINUSE, std::generic_category(), "a test of netserve's sends to the data port");
  }
  claim = claim_ports(shared_->own_ports, {static_cast<std::uint16_t>(setup.data_port)});
  const int max = shared_->options.max_socket_buffer;
  setup.recv_buf_size = set_recv_buffer(fd.get(), r.recv_buf_size > 0 ? std::min(r.recv_buf_size, max) : 0);
  setup.send_buf_size = set_send_buffer(fd.get(), r.send_buf_size > 0 ? std::min(r.send_buf_size, max) : 0);
  if (!udp) {
    if (!r.cong_control.empty()) set_tcp_congestion(fd.get(), r.cong_control);
    if (::listen(fd.get(), 4) != 0)
      throw std::system_error(errno, std::generic_category(), "listening on the data socket");
  }
  return fd;
}

asio::awaitable<void> netperf_session::serve_test(const np::omni_request& r) {
  std::optional<port_slot> slot;
  std::optional<budget::hold> held;
  std::optional<netperf_refusal> no = check_netperf_request(r, shared_->options);
  if (!no) no = take_slot(r, slot, held);
  np::omni_setup setup = setup_of(r);
  port_claim claim;  // before the socket: released after it closes
  fd_handle fd;
  if (!no) {
    try {
      fd = open_data_socket(r, setup, claim);
    } catch (const std::system_error& e) {
      no = netperf_refusal{e.code().value(), fmt::format("data socket: {}", e.what())};
    }
  }
  if (no) {
    exchange_.refused();
    co_await refuse(np::type_setup, *no);
    co_return;
  }
  const std::uint64_t id = ++shared_->tests_registered;
  netperf_plan plan = data_plan_of(r, endpoint::peer_of(socket_.native_handle()));
  plan.peer_local = is_local_address(plan.peer);
  plan.own = shared_->own_ports;
  auto data = std::make_unique<netperf_data>(std::move(fd), std::move(plan));
  exchange_.test_began(mono_ns());
  co_await send(np::encode_setup(setup));
  const bool quiet = co_await await_data(*data);
  exchange_.test_ended(mono_ns());
  const netperf_counts& c = data->counts();
  // The padding was idle time, as netserver subtracts it.
  const double seconds = std::max(0.0, ns_to_s(c.elapsed_ns) - (c.timed_out ? np::pad_time_s : 0));
  log_result(id, r, c, seconds);  // first: a client that has gone gets no results
  if (!quiet) exchange_.bytes_during_test();
  co_await send(np::encode_results(omni_results_of(c, setup, seconds)));
}

asio::awaitable<bool> netperf_session::await_data(netperf_data& data) {
  // A client that has gone (a killed netperf) holds no slot, thread or budget until the deadline.
  bool quiet = true;
  while (!data.done()) {
    co_await sleep_for(10ms);
    if (const control_state s = control(); s != control_state::quiet) {
      quiet = quiet && s == control_state::closed;
      data.stop();
    }
  }
  co_return quiet;
}

control_state netperf_session::control() {
  char byte = 0;
  const ssize_t n = ::recv(socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return control_state::bytes;
  return n == 0 || !nb::transient_errno(errno) ? control_state::closed : control_state::quiet;
}

void netperf_session::log_result(std::uint64_t id, const np::omni_request& r, const netperf_counts& c,
                                 double seconds) const {
  const bool rr = r.direction != np::dir_recv;
  std::string tail;
  if (rr) tail = fmt::format(" answers={} answer_bytes={} transactions={}", c.send_calls, c.bytes_sent, c.transactions);
  if (c.foreign) tail += fmt::format(" foreign={}", c.foreign);
  if (c.from_own) tail += fmt::format(" from_netserve={}", c.from_own);
  fmt::print(
      stderr,
      "netserve: port {} test {} {} forward from {} streams=1: received packets={} bytes={} seconds={:.3f} pps={:.1f} "
      "mbps={:.3f}{} ended={}{}{} client={}\n",
      port_->number, id, netperf_test_name(r), peer_, c.recv_calls, c.bytes_received, seconds,
      per_second(c.recv_calls, seconds), bits_per_second(c.bytes_received, seconds) / 1e6, tail,
      c.timed_out ? "deadline" : "client", c.error.empty() ? "" : " error=", printable_bounded(c.error), client_name);
}

// EBUSY, after reading its first message so the answer is not lost to a reset.
void refuse_connection(tcp::socket& socket) {
  boost::system::error_code ignored;
  socket.non_blocking(true, ignored);
  np::block first{};
  socket.read_some(asio::buffer(first), ignored);
  const np::block answer = np::encode_error(np::type_setup, EBUSY);
  socket.write_some(asio::buffer(answer), ignored);
}

}  // namespace

asio::awaitable<void> serve_netperf(tcp::socket socket, std::shared_ptr<served_port> port,
                                    std::shared_ptr<server_shared> shared, [[maybe_unused]] budget::hold unit) {
  const std::string head = fmt::format("netserve: port {}: netperf connection from ", port->number);
  std::string peer = "?";
  try {
    peer = socket.remote_endpoint().address().to_string();
    // A connection runs one test at a time: as many as the client's test slots.
    const std::string client = client_of(socket.remote_endpoint().address());
    const std::uint64_t most = shared->process_budget->share_of(shared->options.max_tests_per_port);
    if (auto it = port->netperf_controls_of_client.find(client);
        it != port->netperf_controls_of_client.end() && it->second >= most) {
      log_peer(*shared, fmt::format("{}{} refused: {} netperf connections from this client already, its share of the "
                                    "port's {} test slots",
                                    head, peer, most, shared->options.max_tests_per_port));
      refuse_connection(socket);
      co_return;
    }
    client_count held(port->netperf_controls_of_client, client);
    netperf_session session(std::move(socket), port, shared);
    co_await session.run();
  } catch (const protocol_error& e) {
    log_peer(*shared, fmt::format("{}{} closed: {}", head, peer, printable_bounded(e.what())));
  } catch (const boost::system::system_error& e) {
    log_peer(*shared, fmt::format("{}{} lost: {}", head, peer, e.code().message()));
  } catch (const std::exception& e) {
    log_peer(*shared, fmt::format("{}{} failed: {}", head, peer, printable_bounded(e.what())));
  }
}

}  // namespace nb::serve
