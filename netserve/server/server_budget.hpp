#pragma once
// What the whole netserve process may hold for its clients, and how much of it one client may take.
//
// Without a budget, one client (no key needed) could register tests on every port and open every data
// connection they name: each TCP stream is a thread, a descriptor and a 1 MiB buffer, so 64 tests x 64
// streams took one port to 4 GB and 4000 threads and refused everyone else. Every test therefore takes its
// whole cost (streams, buffers) from the budget when it is registered, before its data connections come,
// and gives it back when its session ends; every connection holds one unit from accept to close (data
// connections hand theirs over to their test's streams). A client is a peer address (client_of); it may hold at most
// `client_share` of each budget, so a second address still finds room.
//
// Single-threaded: only the control plane's io_context thread takes and releases.
#include "core/wire/native/protocol.hpp"

#include <boost/asio/ip/address.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace nb::serve {

struct budget_limits {
  std::uint64_t tests = 128;                  // tests registered at once, waiting for their start or running
  std::uint64_t streams = 256;                // data-plane streams: a thread and (TCP) a descriptor each
  std::uint64_t buffer_bytes = 256ull << 20;  // the streams' buffers
  std::uint64_t connections = 512;            // open connections: control, and those not yet identified
  double client_share = 0.25;                 // of each budget, what one peer address may hold
};

// What one test or connection holds.
struct budget_cost {
  std::uint64_t tests = 0;
  std::uint64_t streams = 0;
  std::uint64_t buffer_bytes = 0;
  std::uint64_t connections = 0;
};

// The client a peer address belongs to: IPv4 by address; IPv6 by its /64, which one host usually has
// whole (a client with a /64 could otherwise take every share under another address).
std::string client_of(const boost::asio::ip::address& peer);

// A validated request's cost: forward UDP is received by its port's lanes (no thread, descriptor or
// buffer of its own); every other stream has a thread, its buffer, and for TCP a data connection.
budget_cost cost_of(const test_request& r);

class budget : public std::enable_shared_from_this<budget> {
 public:
  // Gives its cost back when destroyed. Holds the budget alive: at shutdown a session's frame may be
  // destroyed after the server that owns the budget.
  class hold {
   public:
    hold(std::shared_ptr<budget> owner, std::string client, budget_cost cost)
        : owner_(std::move(owner)), client_(std::move(client)), cost_(cost) {}
    hold(hold&& o) noexcept = default;
    hold& operator=(hold&&) = delete;
    hold(const hold&) = delete;
    ~hold();

   private:
    std::shared_ptr<budget> owner_;
    std::string client_;
    budget_cost cost_;
  };

  static std::shared_ptr<budget> create(budget_limits limits) { return std::shared_ptr<budget>(new budget(limits)); }
  // Takes `cost` for `client`, or returns nullopt with `why` naming the limit it would pass.
  std::optional<hold> try_take(const std::string& client, const budget_cost& cost, std::string& why);
  // What one client may hold of a budget of `total`: its share, at least one.
  std::uint64_t share_of(std::uint64_t total) const noexcept;
  const budget_limits& limits() const noexcept { return limits_; }

 private:
  explicit budget(budget_limits limits) : limits_(limits) {}
  void give_back(const std::string& client, const budget_cost& cost) noexcept;

  budget_limits limits_;
  budget_cost used_;
  std::map<std::string, budget_cost> by_client_;
};

// Connections one client address may have in their first-message window: accepted, and their first
// message (a netload frame, an iperf3 cookie, a netperf request's first bytes) not yet all read. Such a
// connection is held up to --first-message-timeout for nothing; one beyond these is closed at accept.
// Clients connect their streams one after another and speak at once, so this is far above what they
// use, and a quarter of one address's share of connections at the defaults.
inline constexpr std::uint64_t first_message_window_per_client = 32;

// How many of something each client address holds, at most `per_client` each (connections in their
// first-message window). Single-threaded as the budget.
class per_client_count : public std::enable_shared_from_this<per_client_count> {
 public:
  // Gives its unit back when destroyed.
  class hold {
   public:
    hold(std::shared_ptr<per_client_count> owner, std::string client)
        : owner_(std::move(owner)), client_(std::move(client)) {}
    hold(hold&& o) noexcept = default;
    hold& operator=(hold&&) = delete;
    hold(const hold&) = delete;
    ~hold();

   private:
    std::shared_ptr<per_client_count> owner_;
    std::string client_;
  };

  static std::shared_ptr<per_client_count> create(std::uint64_t per_client) {
    return std::shared_ptr<per_client_count>(new per_client_count(per_client));
  }
  // One more for `client`, or nullopt when it holds `per_client` already.
  std::optional<hold> try_take(const std::string& client);
  std::uint64_t held(const std::string& client) const;
  std::uint64_t per_client() const noexcept { return per_client_; }

 private:
  explicit per_client_count(std::uint64_t per_client) : per_client_(per_client) {}
  void give_back(const std::string& client) noexcept;

  std::uint64_t per_client_;
  std::map<std::string, std::uint64_t> by_client_;
};

// What each unit costs beyond its stream buffer (tests/integration/test_limits.cpp checks the bound): a
// data thread's touched stack and bookkeeping (a few KiB measured, about 250 KiB in the ASan build, whose
// figure is taken so that the bound holds for both), a connection's coroutine and the control frame it may
// be reading, a test's counters and session.
inline constexpr std::uint64_t stream_overhead_bytes = 384u << 10;
inline constexpr std::uint64_t connection_overhead_bytes = 80u << 10;
inline constexpr std::uint64_t test_overhead_bytes = 32u << 10;

// Most memory netserve holds beyond its idle size, whatever its clients do: what the budget allows.
std::uint64_t memory_bound(const budget_limits& limits);
// The text `netserve --help` prints about the budget and the memory it bounds; `tests_per_port`:
// --max-tests-per-port, whose share bounds one address's netperf control connections on a port.
std::string budget_help(const budget_limits& limits, std::uint64_t tests_per_port);

}  // namespace nb::serve
