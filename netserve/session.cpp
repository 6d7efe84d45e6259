// A control session: one coroutine per connection, from the first frame to the result.
#include "netserve/server.hpp"

#include "core/clock.hpp"
#include "core/saturating.hpp"
#include "core/text.hpp"
#include "core/host_stats.hpp"
#include "core/units.hpp"
#include "core/version.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

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

// Time left until a wall-clock instant, never negative; instants are validated, so no overflow.
std::chrono::nanoseconds until_wall(std::int64_t wall) {
  return std::chrono::nanoseconds(std::max<std::int64_t>(0, wall - wall_ns()));
}

constexpr std::int64_t max_start_lag_ns = 60LL * 1'000'000'000;  // a start instant this far in the past is refused
constexpr auto end_grace = 60s;  // the client's end must arrive this long after the test's end at most

// The host from just before the start instant (the client's lead before it is no part of the test) to the end of
// the data: our senders' end in reverse, the client's end forward. The drain after it is mostly idle
// time, which would dilute the CPU shares.
asio::awaitable<void> sample_host(const served_test& t, const bool& ended, std::optional<host_delta>& out) {
  const std::int64_t at = t.start_wall_ns() - snapshot_lead_ns;
  while (!ended && wall_ns() < at) co_await sleep_for(std::min<std::chrono::nanoseconds>(until_wall(at), 100ms));
  auto from = take_host_snapshot();
  while (!ended && !(t.request().reverse && t.finished())) co_await sleep_for(10ms);
  auto to = take_host_snapshot();
  if (from && to) {
    out = host_delta_between(*from, *to);
    out->pinned_cpu = t.pinned_cpu();  // the first stream's thread; -1 when not pinned as asked
  }
}

}  // namespace

asio::awaitable<void> server::session(tcp::socket socket, std::shared_ptr<port_state> port) {
  port_state& p = *port;
  std::string peer = "?";
  frame_mac mac;  // keyed once the key check passed: every later frame, both ways, is sealed
  try {
    peer = socket.remote_endpoint().address().to_string();
    auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(options_.first_message_timeout_s));
    if (!options_.psk.empty()) mac = co_await require_auth(socket, options_.psk, timeout);
    message first = co_await read_message(socket, mac, timeout);
    if (auto* hello = std::get_if<data_hello>(&first)) {
      attach_data(socket, p, *hello, mac);
    } else if (auto* request = std::get_if<test_request>(&first)) {
      co_await run_test(socket, mac, p, std::move(*request));
    } else {
      throw protocol_error(fmt::format("first message must be 'test_request' or 'data', not '{}'", message_type(first)));
    }
  } catch (const protocol_error& e) {
    // The reason may quote what the peer sent (an unknown type, a field name): never raw into our log.
    fmt::print(stderr, "netserve: port {}: closing connection from {}: {}\n", p.number, peer, printable(e.what()));
    if (socket.is_open()) {
      // Tell the client why, best effort, then close.
      std::string frame = encode_frame(error_msg{e.what()}, mac);
      boost::system::error_code ignored;
      socket.non_blocking(true, ignored);
      socket.write_some(asio::buffer(frame), ignored);
    }
  } catch (const boost::system::system_error& e) {
    fmt::print(stderr, "netserve: port {}: connection from {} lost: {}\n", p.number, peer, e.code().message());
  } catch (const std::exception& e) {
    fmt::print(stderr, "netserve: port {}: connection from {} failed: {}\n", p.number, peer, printable(e.what()));
  }
}

asio::awaitable<void> server::run_test(tcp::socket& socket, frame_mac& mac, port_state& p, test_request request) {
  validate(request);
  request.rcvbuf = std::min(request.rcvbuf, options_.max_socket_buffer);  // a wish, as setsockopt's is
  request.sndbuf = std::min(request.sndbuf, options_.max_socket_buffer);
  const std::string client = client_of(socket.remote_endpoint().address());
  // A port's test slots are shared as the process budget is: two addresses filling 32 slots each would
  // otherwise close the port to everyone else.
  if (p.tests.size() >= options_.max_tests_per_port)
    throw protocol_error(fmt::format("rejected: port {} already runs {} tests", p.number, p.tests.size()));
  if (const std::uint64_t share = budget_->share_of(options_.max_tests_per_port); p.tests_of_client[client] >= share)
    throw protocol_error(fmt::format("rejected: port {} already runs {} tests from this client, one client's share of {}",
                                     p.number, share, options_.max_tests_per_port));
  endpoint peer = endpoint::peer_of(socket.native_handle());
  // The test's whole cost is taken now, before its data connections come and whether or not it ever
  // starts, and given back when this session ends.
  std::string why;
  const std::optional<budget::hold> held = budget_->try_take(client, cost_of(request), why);
  if (!held) throw protocol_error("rejected: " + why);
  auto test = std::make_shared<served_test>(++next_test_id_, make_cookie(), std::move(request), peer,
                                            endpoint::local_of(socket.native_handle()), p.udp);
  const test_request& r = test->request();
  test->set_data_key(mac.key());  // with a key, data connections must show a token derived from it
  p.tests.emplace(test->cookie(), test);
  ++p.tests_of_client[client];
  struct unregister {
    port_state& p;
    std::string cookie, client;
    ~unregister() {
      p.tests.erase(cookie);
      if (--p.tests_of_client[client] == 0) p.tests_of_client.erase(client);
    }
  } guard{p, test->cookie(), client};

  ready_msg ready{test->id(), test->cookie(), version, 0, 0, ""};
  if (r.kind == test_kind::udp_stream && !r.reverse) {
    ready.rcvbuf = test->attach_udp();
    ready.batching = p.udp->batching();
  } else {
    std::tie(ready.rcvbuf, ready.sndbuf) = test->data_socket_buffers();
  }
  const message ready_m = ready;
  co_await write_message(socket, mac, ready_m);

  auto start = co_await expect_message<start_msg>(socket, mac, 30s);
  if (start.start_wall_ns > wall_ns() + s_to_ns(options_.max_start_lead_s))
    throw protocol_error(fmt::format("rejected: start instant more than {} s ahead", options_.max_start_lead_s));
  if (start.start_wall_ns < wall_ns() - max_start_lag_ns) throw protocol_error("rejected: start instant long past");
  for (int i = 0; i < 1000 && !test->all_data_attached(); ++i) co_await sleep_for(10ms);
  if (!test->all_data_attached()) throw protocol_error("not every TCP data connection arrived within 10 s");
  test->start(start.start_wall_ns);

  bool ended = false;
  std::optional<host_delta> host;
  auto client_end = co_await (report_intervals(socket, mac, *test, ended) && await_end(socket, mac, *test, ended) &&
                              sample_host(*test, ended, host));
  co_await drain(*test);
  result_msg result{test->finish(), test->unattributed_since_start(), std::move(host)};
  const message result_m = result;
  co_await write_message(socket, mac, result_m);

  const side_counts& c = result.counts;
  double seconds = ns_to_s(r.reverse ? c.elapsed_ns : client_end.counts.elapsed_ns);
  fmt::print(stderr,
             "netserve: port {} test {} {} {} from {} m={} streams={}: {} packets={} bytes={} seconds={:.3f} pps={:.1f} "
             "mbps={:.3f} kernel_drops={} unattributed={}{}{}{}\n",
             p.number, test->id(), to_string(r.kind), r.reverse ? "reverse" : "forward", peer.address(), r.message_size,
             r.streams, r.reverse ? "sent" : "received", c.packets, c.bytes, seconds, per_second(c.packets, seconds),
             bits_per_second(c.bytes, seconds) / 1e6, c.kernel_drops, result.unattributed,
             test->lanes_used().empty() ? "" : " lanes=", test->lanes_used(), c.error.empty() ? "" : " error=",
             printable(c.error));
}

asio::awaitable<void> server::report_intervals(tcp::socket& socket, frame_mac& mac, const served_test& t,
                                               const bool& ended) {
  const test_request& r = t.request();
  if (r.interval_s <= 0) co_return;
  // Interval k ends at start + (k+1) * step, the last one at the end of the test: the client samples its
  // own counters at the same wall-clock instants, so the two sides' intervals line up.
  const std::int64_t step = s_to_ns(r.interval_s), end = saturating_add(t.start_wall_ns(), s_to_ns(r.duration_s));
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (std::uint32_t k = 0;; ++k) {
    std::int64_t boundary = std::min(saturating_add(t.start_wall_ns(), saturating_mul(std::int64_t{k} + 1, step)), end);
    // A client that ended early gets no more samples; one whose end merely beat our timer to the last
    // boundary still gets every one, so its intervals are complete.
    // Waits in short slices, so that a client that ended early does not hold its result back.
    while (!ended && wall_ns() < boundary) {
      timer.expires_after(std::min<std::chrono::nanoseconds>(until_wall(boundary), 100ms));
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (ended && boundary > wall_ns()) break;
    interval_msg m{k, boundary, 0, 0};
    t.totals(m.packets, m.bytes);
    const message msg = m;
    co_await write_message(socket, mac, msg);
    if (boundary >= end) break;
  }
}

asio::awaitable<end_msg> server::await_end(tcp::socket& socket, frame_mac& mac, const served_test& t, bool& ended) {
  const test_request& r = t.request();
  // From the start instant, or from now when it is past (late senders still send the whole duration).
  const std::int64_t end_ns = saturating_add(std::max(t.start_wall_ns(), wall_ns()), s_to_ns(r.duration_s));
  auto timeout = until_wall(end_ns) + end_grace;
  auto end = co_await expect_message<end_msg>(socket, mac, timeout);
  ended = true;
  co_return end;
}

asio::awaitable<void> server::drain(served_test& t) {
  const test_request& r = t.request();
  std::int64_t quiet = s_to_ns(options_.drain_quiet_s);
  std::int64_t give_up = mono_ns() + s_to_ns(options_.drain_max_s);
  bool udp_in = r.kind == test_kind::udp_stream && !r.reverse;
  while (mono_ns() < give_up) {
    if (udp_in ? t.drained(quiet) : t.finished()) co_return;
    co_await sleep_for(5ms);
  }
}

}  // namespace nb::serve
