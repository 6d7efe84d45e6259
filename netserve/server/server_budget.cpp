#include "netserve/server/server_budget.hpp"

#include "core/base/saturating.hpp"

#include "core/data/streams.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace nb::serve {
namespace {

budget_cost operator+(const budget_cost& a, const budget_cost& b) noexcept {
  return {saturating_add<std::uint64_t>(a.tests, b.tests), saturating_add<std::uint64_t>(a.streams, b.streams),
          saturating_add<std::uint64_t>(a.buffer_bytes, b.buffer_bytes),
          saturating_add<std::uint64_t>(a.connections, b.connections)};
}

// A release without its take would be a bug, not a reason to wrap.
void subtract(budget_cost& from, const budget_cost& c) noexcept {
  from.tests -= std::min(from.tests, c.tests);
  from.streams -= std::min(from.streams, c.streams);
  from.buffer_bytes -= std::min(from.buffer_bytes, c.buffer_bytes);
  from.connections -= std::min(from.connections, c.connections);
}

bool is_zero(const budget_cost& c) noexcept {
  return c.tests == 0 && c.streams == 0 && c.buffer_bytes == 0 && c.connections == 0;
}

// Limits are bounded at parse: far below 2^53.
std::uint64_t share(std::uint64_t total, double fraction) noexcept {
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::floor(static_cast<double>(total) * fraction)));
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

std::string client_of(const boost::asio::ip::address& peer) {
  if (peer.is_v4()) return peer.to_string();
  const auto v6 = peer.to_v6();
  if (v6.is_v4_mapped()) return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).to_string();
  auto bytes = v6.to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return boost::asio::ip::address_v6(bytes).to_string() + "/64";
}

budget_cost cost_of(const test_request& r) {
  if (is_udp(r.kind) && !r.reverse) return {1, 0, 0, 0};  // the port's lanes receive (and answer)
  std::uint64_t size = std::max<std::uint64_t>(r.message_size, 1);
  std::uint64_t per_stream = 0;
  if (r.kind == test_kind::tcp_rr)  // a read buffer and one answer
    per_stream = std::max<std::uint64_t>(size, 64u << 10) + r.response_size;
  else if (r.kind == test_kind::tcp_stream)
    per_stream = r.reverse ? size : (r.recv_size ? r.recv_size : tcp_max_default_recv_size);
  else  // a batch, each with a header, an iovec and ancillary data
    per_stream = saturating_mul<std::uint64_t>(default_batch(r.message_size), saturating_add<std::uint64_t>(size, 256));
  return {1, r.streams, saturating_mul<std::uint64_t>(r.streams, per_stream), 0};
}

budget::hold::~hold() {
  if (owner_) owner_->give_back(client_, cost_);
}

std::uint64_t budget::share_of(std::uint64_t total) const noexcept { return share(total, limits_.client_share); }

std::optional<budget::hold> budget::try_take(const std::string& client, const budget_cost& cost, std::string& why) {
  const budget_cost all = used_ + cost;
  const budget_cost mine = (by_client_.count(client) ? by_client_.at(client) : budget_cost{}) + cost;
  struct check {
    const char* what;
    std::uint64_t in_use, want_all, want_mine, limit;
    bool bytes;
  };
  const check checks[] = {
      {"tests", used_.tests, all.tests, mine.tests, limits_.tests, false},
      {"data streams", used_.streams, all.streams, mine.streams, limits_.streams, false},
      {"stream buffers", used_.buffer_bytes, all.buffer_bytes, mine.buffer_bytes, limits_.buffer_bytes, true},
      {"connections", used_.connections, all.connections, mine.connections, limits_.connections, false},
  };
  for (const check& c : checks) {
    auto amount = [&](std::uint64_t n) { return c.bytes ? mib(n) : std::to_string(n); };
    if (c.want_mine > share_of(c.limit)) {
      why = fmt::format("{} would hold {} {}, more than one client's share ({} of {})", client, amount(c.want_mine),
                        c.what, amount(share_of(c.limit)), amount(c.limit));
      return std::nullopt;
    }
    if (c.want_all > c.limit) {
      why = fmt::format("the server's {} are taken ({} of {} in use)", c.what, amount(c.in_use), amount(c.limit));
      return std::nullopt;
    }
  }
  used_ = all;
  by_client_[client] = mine;
  return hold(shared_from_this(), client, cost);
}

void budget::give_back(const std::string& client, const budget_cost& cost) noexcept {
  subtract(used_, cost);
  auto it = by_client_.find(client);
  if (it == by_client_.end()) return;
  subtract(it->second, cost);
  if (is_zero(it->second)) by_client_.erase(it);
}

per_client_count::hold::~hold() {
  if (owner_) owner_->give_back(client_);
}

std::optional<per_client_count::hold> per_client_count::try_take(const std::string& client) {
  if (held(client) >= per_client_) return std::nullopt;
  ++by_client_[client];
  return hold(shared_from_this(), client);
}

std::uint64_t per_client_count::held(const std::string& client) const {
  auto it = by_client_.find(client);
  return it == by_client_.end() ? 0 : it->second;
}

void per_client_count::give_back(const std::string& client) noexcept {
  auto it = by_client_.find(client);
  if (it == by_client_.end()) return;
  if (it->second > 0) --it->second;
  if (it->second == 0) by_client_.erase(it);
}

std::uint64_t memory_bound(const budget_limits& l) {
  return saturating_add<std::uint64_t>(
      saturating_add<std::uint64_t>(l.buffer_bytes, saturating_mul<std::uint64_t>(l.streams, stream_overhead_bytes)),
      saturating_add<std::uint64_t>(saturating_mul<std::uint64_t>(l.connections, connection_overhead_bytes),
                                    saturating_mul<std::uint64_t>(l.tests, test_overhead_bytes)));
}

std::string budget_help(const budget_limits& l, std::uint64_t tests_per_port) {
  const auto in_mib = [](std::uint64_t bytes) { return (bytes + (1 << 20) - 1) >> 20; };
  return fmt::format(
      "Budget, whole process; one client address may hold --client-share of each (at the defaults: {} tests, {} data "
      "streams, {} MiB of buffers, {} connections).\n"
      "A test takes its whole cost when it is registered, before its data connections: forward UDP is received by "
      "the port's lanes and costs one test; every other stream is a data stream with its buffer (forward TCP its receive size, 256 KiB by default, "
      "reverse TCP one message, reverse UDP one batch, about 1 MiB). Threads and buffers are made only when the "
      "test starts (its start instant at most --max-start-lead ahead). A connection holds one unit from accept to "
      "close (a data connection's passes to its test); one address may have {} connections that have not yet sent their "
      "first message, more are closed at accept.\n"
      "Bound under any load, keyed or not: netserve's memory stays within its idle size + the buffers + {} KiB per "
      "data stream (stack, bookkeeping) + {} KiB per connection (a control frame is up to 64 KiB) + {} KiB per test; "
      "at the defaults {} MiB above idle, {} MiB for one client. Threads: idle + --max-data-streams; descriptors: "
      "idle + 2 x --max-data-streams (a reverse TCP stream's message is a memory file) + --max-connections. Kernel "
      "socket buffers: what a client asks, up to --max-socket-buffer each.\n"
      "A stock netperf client's control connections: one address holds at most its share of a port's test slots "
      "there ({} at the defaults), each at most --netperf-idle-max outside its tests, in all.\n"
      "Shares bound what one address holds; 1/--client-share addresses together can hold everything. Where "
      "strangers reach netserve, require a key (--psk-file): without it a connection holds nothing past its "
      "challenge.",
      share(l.tests, l.client_share), share(l.streams, l.client_share), in_mib(share(l.buffer_bytes, l.client_share)),
      share(l.connections, l.client_share), first_message_window_per_client, stream_overhead_bytes >> 10,
      connection_overhead_bytes >> 10, test_overhead_bytes >> 10, in_mib(memory_bound(l)),
      in_mib(share(memory_bound(l), l.client_share)), share(tests_per_port, l.client_share));
}

}  // namespace nb::serve
