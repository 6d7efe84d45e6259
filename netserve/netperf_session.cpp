#include "netserve/netperf_session.hpp"

#include "core/base/clock.hpp"
#include "core/base/limits.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/sys/eintr.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/frame_io.hpp"
#include "core/wire/netperf_wire.hpp"
#include "netserve/netperf_data.hpp"

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

constexpr auto step_timeout = 30s;                  // the next request after a test's results: netperf sends it at once
constexpr const char* client_name = "netperf 2.7";  // the request layout (38, 18, 27 converted words) is 2.7's

struct refusal {
  int errno_value;
  std::string why;  // for the log
};

const char* test_name(const np::omni_request& r) noexcept {
  const bool rr = r.direction == (np::dir_recv | np::dir_xmit);
  if (r.protocol == np::ipproto_udp) return rr ? "UDP_RR" : "UDP_STREAM";
  return rr ? "TCP_RR" : "TCP_STREAM";
}

std::optional<refusal> check(const np::omni_request& r, const server_options& o) {
  const bool stream = r.direction == np::dir_recv, rr = r.direction == (np::dir_recv | np::dir_xmit);
  if (!stream && !rr)
    return refusal{EOPNOTSUPP, fmt::format("direction {:#x} (netserve serves STREAM and RR tests)", r.direction)};
  if (r.flags & np::flag_connect_test) return refusal{EOPNOTSUPP, "a connection test (TCP_CRR, TCP_CC)"};
  const bool tcp = r.protocol == np::ipproto_tcp && r.socket_type == np::nst_stream;
  const bool udp = r.protocol == np::ipproto_udp && r.socket_type == np::nst_dgram;
  if (!tcp && !udp)
    return refusal{EPROTONOSUPPORT, fmt::format("protocol {} on socket type {}", r.protocol, r.socket_type)};
  if (r.ipfamily != np::nf_inet && r.ipfamily != np::nf_inet6)
    return refusal{EAFNOSUPPORT, fmt::format("address family {}", r.ipfamily)};
  if (r.test_length <= 0) return refusal{EINVAL, "a test bounded by a count, or unbounded (-l 0 or negative)"};
  if (r.test_length > o.max_duration_s)
    return refusal{EINVAL, fmt::format("-l {} over {:g} s", r.test_length, o.max_duration_s)};
  if (rr) {
    const std::int64_t most = udp ? max_udp_message_size : max_tcp_message_size;
    if (r.request_size < 1 || r.request_size > most || r.response_size < 1 || r.response_size > most)
      return refusal{EINVAL, fmt::format("-r {},{} outside 1..{}", r.request_size, r.response_size, most)};
  }
  if (r.data_port != 0 && r.data_port < 1024)
    return refusal{EACCES, fmt::format("data port {} (below 1024)", r.data_port)};
  if (r.data_port > 65535) return refusal{EINVAL, fmt::format("data port {}", r.data_port)};
  if (!r.cong_control.empty() && (!tcp || !valid_congestion_name(r.cong_control) || !congestion_loaded(r.cong_control)))
    return refusal{EINVAL, fmt::format("congestion control '{}'", printable_bounded(r.cong_control))};
  return std::nullopt;
}

// What one recv() of a TCP_STREAM test asks for: the client's -M, or netserve's 128 KiB (netperf sends -1
// for "the server's choice"), at most 1 MiB.
std::uint32_t tcp_read_size(const np::omni_request& r) noexcept {
  const bool chosen = r.receive_size != 0 && r.receive_size != 0xffffffffU;
  return chosen ? std::min<std::uint32_t>(r.receive_size, 1u << 20) : 128u << 10;
}

// What the data thread of request `r` does, with `peer` (the control connection's far end).
netperf_plan data_plan_of(const np::omni_request& r, const endpoint& peer) {
  netperf_plan plan;
  plan.udp = r.protocol == np::ipproto_udp;
  plan.rr = r.direction != np::dir_recv;
  plan.request_size = static_cast<std::uint32_t>(std::max(r.request_size, 0));
  plan.response_size = static_cast<std::uint32_t>(std::max(r.response_size, 0));
  plan.receive_size = tcp_read_size(r);
  plan.peer = peer;
  // netserver pads a receiving test's timer: the client's end (its close, or its zero-length datagrams)
  // comes first, and only a client that vanished runs it out.
  plan.deadline_mono_ns = mono_ns() + s_to_ns(r.test_length + np::pad_time_s);
  return plan;
}

// The results block netperf reads: this side's counts over `seconds`, and the buffers it had.
np::omni_results omni_results_of(const netperf_counts& c, const np::omni_setup& setup, double seconds) {
  np::omni_results out;
  out.bytes_received = c.bytes_received;
  out.recv_calls = np::field32(c.recv_calls);
  out.recv_buf_size = setup.recv_buf_size;
  out.bytes_sent = c.bytes_sent;
  out.send_calls = np::field32(c.send_calls);
  out.send_buf_size = setup.send_buf_size;
  out.failed_sends = np::field32(c.failed_sends);
  out.trans_received = np::field32(c.transactions);
  out.elapsed_time = static_cast<float>(seconds);
  return out;
}

// A test's place on its port, given back when the test ends.
class port_slot {
 public:
  port_slot(served_port& port, std::string client) : port_(port), client_(std::move(client)) {
    ++port_.netperf_tests;
    ++port_.tests_of_client[client_];
  }
  ~port_slot() {
    --port_.netperf_tests;
    if (auto it = port_.tests_of_client.find(client_); it != port_.tests_of_client.end() && --it->second == 0)
      port_.tests_of_client.erase(it);
  }
  port_slot(const port_slot&) = delete;
  port_slot& operator=(const port_slot&) = delete;

 private:
  served_port& port_;
  std::string client_;
};

class netperf_session {
 public:
  netperf_session(tcp::socket socket, std::shared_ptr<served_port> port, std::shared_ptr<server_shared> shared)
      : socket_(std::move(socket)), port_(std::move(port)), shared_(std::move(shared)) {
    peer_ = socket_.remote_endpoint().address().to_string();
    client_ = client_of(socket_.remote_endpoint().address());
  }

  asio::awaitable<void> run();

 private:
  asio::awaitable<void> serve_test(const np::block& request);
  std::optional<refusal> take_slot(const np::omni_request& r, std::optional<port_slot>& slot,
                                   std::optional<budget::hold>& held);
  fd_handle open_data_socket(const np::omni_request& r, np::omni_setup& setup);
  asio::awaitable<void> refuse(std::int32_t type, const refusal& r);
  // The client closed its control connection (or it failed): nothing more will come from it.
  bool control_closed();
  asio::awaitable<void> send(const np::block& b) {
    co_await write_frame(socket_, std::string(b.begin(), b.end()), 10s);
  }
  void log_result(std::uint64_t id, const np::omni_request& r, const netperf_counts& c, double seconds) const;

  tcp::socket socket_;
  std::shared_ptr<served_port> port_;
  std::shared_ptr<server_shared> shared_;
  std::string peer_, client_;
};

asio::awaitable<void> netperf_session::run() {
  const auto first = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(shared_->options.first_message_timeout_s));
  np::block b{};
  for (bool first_request = true;; first_request = false) {
    try {
      co_await read_exact(socket_, asio::buffer(b), first_request ? first : step_timeout,
                          "waiting for a netperf request");
    } catch (const boost::system::system_error& e) {
      if (e.code() == asio::error::eof) co_return;  // netperf's shutdown_control: its tests are over
      throw;
    }
    const np::header h = np::decode_header(b);
    if (h.type == np::type_passphrase) continue;  // netserver started without one ignores it, as netserve does
    if (h.type != np::type_request) {
      // Named, not a braced temporary in the co_await: GCC 12 destroys such a temporary twice.
      const refusal no{np::unknown_test_errno,
                       fmt::format("request type {} (a test netperf does not run as OMNI)", h.type)};
      co_await refuse(h.type, no);
      continue;
    }
    co_await serve_test(b);
  }
}

asio::awaitable<void> netperf_session::refuse(std::int32_t type, const refusal& r) {
  fmt::print(stderr, "netserve: port {}: netperf test from {} refused: {}\n", port_->number, peer_, r.why);
  co_await send(np::encode_error(type, r.errno_value));
}

std::optional<refusal> netperf_session::take_slot(const np::omni_request& r, std::optional<port_slot>& slot,
                                                  std::optional<budget::hold>& held) {
  const server_options& o = shared_->options;
  served_port& p = *port_;
  if (p.running() >= o.max_tests_per_port)
    return refusal{EBUSY, fmt::format("port {} already runs {} tests", p.number, p.running())};
  if (const std::uint64_t share = shared_->process_budget->share_of(o.max_tests_per_port);
      p.tests_of_client[client_] >= share)
    return refusal{EBUSY, fmt::format("port {} already runs {} tests from this client", p.number, share)};
  // One thread and its buffers: a batch of datagrams, an RR exchange's largest message, or a TCP read.
  const bool udp = r.protocol == np::ipproto_udp, rr = r.direction != np::dir_recv;
  const std::uint64_t bytes = rr    ? static_cast<std::uint64_t>(std::max(r.request_size, r.response_size))
                              : udp ? 128u << 10
                                    : tcp_read_size(r);
  std::string why;
  auto taken = shared_->process_budget->try_take(client_, budget_cost{1, 1, bytes, udp ? 0u : 1u}, why);
  if (!taken) return refusal{EBUSY, why};
  held.emplace(std::move(*taken));
  slot.emplace(p, client_);
  return std::nullopt;
}

// Bound (and listening, TCP) on the control connection's local address, at the port the client asked for
// or one the kernel picks; the buffers as asked (-S), within netserve's --max-socket-buffer. Throws
// std::system_error.
fd_handle netperf_session::open_data_socket(const np::omni_request& r, np::omni_setup& setup) {
  const bool udp = r.protocol == np::ipproto_udp;
  endpoint local = endpoint::local_of(socket_.native_handle());
  local.set_port(static_cast<std::uint16_t>(r.data_port));
  const auto& own = *shared_->own_ports;
  if (r.data_port != 0 && std::binary_search(own.begin(), own.end(), static_cast<std::uint16_t>(r.data_port)))
    throw std::system_error(EADDRINUSE, std::generic_category(), "the data port is one of netserve's own");
  fd_handle fd = udp ? bind_udp(local) : make_socket(local.family(), SOCK_STREAM);
  const int max = shared_->options.max_socket_buffer;
  setup.recv_buf_size = set_recv_buffer(fd.get(), r.recv_buf_size > 0 ? std::min(r.recv_buf_size, max) : 0);
  setup.send_buf_size = set_send_buffer(fd.get(), r.send_buf_size > 0 ? std::min(r.send_buf_size, max) : 0);
  if (!udp) {
    if (!r.cong_control.empty()) set_tcp_congestion(fd.get(), r.cong_control);
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd.get(), local.data(), local.size()) != 0 || ::listen(fd.get(), 4) != 0)
      throw std::system_error(errno, std::generic_category(), "binding the data socket");
  }
  setup.data_port = endpoint::local_of(fd.get()).port();
  return fd;
}

asio::awaitable<void> netperf_session::serve_test(const np::block& request) {
  np::omni_request r;
  std::optional<refusal> no;
  try {
    r = np::decode_request(request);
  } catch (const protocol_error& e) {
    no = refusal{EINVAL, e.what()};
  }
  std::optional<port_slot> slot;
  std::optional<budget::hold> held;
  if (!no) no = check(r, shared_->options);
  if (!no) no = take_slot(r, slot, held);
  np::omni_setup setup;
  fd_handle fd;
  if (!no) {
    try {
      fd = open_data_socket(r, setup);
    } catch (const std::system_error& e) {
      no = refusal{e.code().value(), fmt::format("data socket: {}", e.what())};
    }
  }
  if (no) {
    co_await refuse(np::type_setup, *no);
    co_return;
  }
  const std::uint64_t id = ++shared_->tests_registered;
  const bool rr = r.direction != np::dir_recv;
  setup.receive_size = rr                              ? static_cast<std::uint32_t>(r.request_size)
                       : r.protocol == np::ipproto_udp ? max_udp_message_size
                                                       : tcp_read_size(r);
  setup.send_size = rr ? static_cast<std::uint32_t>(r.response_size) : r.send_size;
  setup.recv_width = setup.send_width = 1;
  setup.flags = r.flags & np::flag_no_delay;  // no CPU figures: netperf then prints none for this side
  setup.test_length = static_cast<std::uint32_t>(r.test_length);
  auto data =
      std::make_unique<netperf_data>(std::move(fd), data_plan_of(r, endpoint::peer_of(socket_.native_handle())));
  co_await send(np::encode_setup(setup));
  // The thread ends by its deadline at the latest; a client that has gone (its control connection closed,
  // as a killed netperf's is) ends it at once, so it holds no slot, thread or budget for nothing.
  while (!data->done()) {
    co_await sleep_for(10ms);
    if (control_closed()) data->stop();
  }
  const netperf_counts& c = data->counts();
  // Ended by the deadline: the padding was idle time, as netserver subtracts it.
  const double seconds = std::max(0.0, ns_to_s(c.elapsed_ns) - (c.timed_out ? np::pad_time_s : 0));
  log_result(id, r, c, seconds);  // first: a client that has gone gets no results, and the log keeps them
  co_await send(np::encode_results(omni_results_of(c, setup, seconds)));
}

bool netperf_session::control_closed() {
  char byte = 0;
  const ssize_t n = ::recv(socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && !nb::transient_errno(errno));
}

void netperf_session::log_result(std::uint64_t id, const np::omni_request& r, const netperf_counts& c,
                                 double seconds) const {
  const bool rr = r.direction != np::dir_recv;
  std::string tail;
  if (rr) tail = fmt::format(" answers={} answer_bytes={} transactions={}", c.send_calls, c.bytes_sent, c.transactions);
  if (c.foreign) tail += fmt::format(" foreign={}", c.foreign);
  fmt::print(
      stderr,
      "netserve: port {} test {} {} forward from {} streams=1: received packets={} bytes={} seconds={:.3f} pps={:.1f} "
      "mbps={:.3f}{} ended={}{}{} client={}\n",
      port_->number, id, test_name(r), peer_, c.recv_calls, c.bytes_received, seconds,
      per_second(c.recv_calls, seconds), bits_per_second(c.bytes_received, seconds) / 1e6, tail,
      c.timed_out ? "deadline" : "client", c.error.empty() ? "" : " error=", printable_bounded(c.error), client_name);
}

}  // namespace

asio::awaitable<void> serve_netperf(tcp::socket socket, std::shared_ptr<served_port> port,
                                    std::shared_ptr<server_shared> shared, [[maybe_unused]] budget::hold unit) {
  // `unit`, the connection's share of the budget, is held to the end.
  const std::uint16_t number = port->number;
  std::string peer = "?";
  try {
    peer = socket.remote_endpoint().address().to_string();
    netperf_session session(std::move(socket), std::move(port), std::move(shared));
    co_await session.run();
  } catch (const protocol_error& e) {
    fmt::print(stderr, "netserve: port {}: closing netperf connection from {}: {}\n", number, peer,
               printable_bounded(e.what()));
  } catch (const boost::system::system_error& e) {
    fmt::print(stderr, "netserve: port {}: netperf connection from {} lost: {}\n", number, peer, e.code().message());
  } catch (const std::exception& e) {
    fmt::print(stderr, "netserve: port {}: netperf connection from {} failed: {}\n", number, peer,
               printable_bounded(e.what()));
  }
}

}  // namespace nb::serve
