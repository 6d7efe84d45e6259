#pragma once
// What the netserve process may hold for its clients, and one client's share of it. Single-threaded:
// the control plane's. Why and how: docs/netserve.md#budget
#include "core/wire/native/protocol.hpp"

#include <boost/asio/ip/address.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace nb::serve {

struct budget_limits {
  std::uint64_t tests = 128;    // registered, started or not
  std::uint64_t streams = 256;  // a thread and (TCP) a descriptor each
  std::uint64_t buffer_bytes = 256ull << 20;
  std::uint64_t connections = 512;  // control, and not yet identified
  double client_share = 0.25;
};

struct budget_cost {
  std::uint64_t tests = 0;
  std::uint64_t streams = 0;
  std::uint64_t buffer_bytes = 0;
  std::uint64_t connections = 0;
};

// IPv6 by its /64, which one host usually has whole.
std::string client_of(const boost::asio::ip::address& peer);

// Forward UDP costs only the test: its port's lanes receive it.
budget_cost cost_of(const test_request& r);

class budget : public std::enable_shared_from_this<budget> {
 public:
  // Gives its cost back. Keeps the budget alive: a session may outlive the server at shutdown.
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
  // nullopt: `why` names the limit it would pass.
  std::optional<hold> try_take(const std::string& client, const budget_cost& cost, std::string& why);
  // At least one.
  std::uint64_t share_of(std::uint64_t total) const noexcept;
  const budget_limits& limits() const noexcept { return limits_; }

 private:
  explicit budget(budget_limits limits) : limits_(limits) {}
  void give_back(const std::string& client, const budget_cost& cost) noexcept;

  budget_limits limits_;
  budget_cost used_;
  std::map<std::string, budget_cost> by_client_;
};

// Accepted connections of one address whose first message is not yet read; the next is closed at accept.
inline constexpr std::uint64_t first_message_window_per_client = 32;

// At most `per_client` of something per client address. Single-threaded as the budget.
class per_client_count : public std::enable_shared_from_this<per_client_count> {
 public:
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
  std::optional<hold> try_take(const std::string& client);
  std::uint64_t held(const std::string& client) const;
  std::uint64_t per_client() const noexcept { return per_client_; }

 private:
  explicit per_client_count(std::uint64_t per_client) : per_client_(per_client) {}
  void give_back(const std::string& client) noexcept;

  std::uint64_t per_client_;
  std::map<std::string, std::uint64_t> by_client_;
};

// Beyond its buffer; the ASan build's thread cost, so the bound holds there (bench/README.md#stream-overhead).
inline constexpr std::uint64_t stream_overhead_bytes = 384u << 10;
inline constexpr std::uint64_t connection_overhead_bytes = 80u << 10;
inline constexpr std::uint64_t test_overhead_bytes = 32u << 10;

// Beyond the idle size, whatever clients do.
std::uint64_t memory_bound(const budget_limits& limits);
// For --help; `tests_per_port`'s share bounds an address's netperf control connections on a port.
std::string budget_help(const budget_limits& limits, std::uint64_t tests_per_port);

}  // namespace nb::serve
