#pragma once
// One netperf control connection as a state machine without a socket: which message may come when, and
// its one deadline. docs/serving-stock-clients.md#the-exchange
#include "core/wire/netperf/netperf_wire.hpp"

#include <cstdint>
#include <string>

namespace nb::serve {

struct netperf_exchange_limits {
  std::int64_t idle_ns = 30'000'000'000;  // outside the tests, in all
  std::uint32_t max_tests = 30;           // netperf -i's most
  std::uint32_t max_refusals = 4;         // netperf exits at the first
};

class netperf_exchange {
 public:
  enum class verdict { ignore, serve, refuse };
  struct step {
    verdict what = verdict::ignore;
    std::int32_t type = 0;          // refuse: the answer's message type
    std::int32_t errno_value = 0;   // refuse: "remote error N"
    std::string why;                // refuse: for the log
    netperf::omni_request request;  // serve: not yet checked against netserve's limits
  };

  netperf_exchange(netperf_exchange_limits limits, std::int64_t began_ns) noexcept
      : limits_(limits), deadline_ns_(began_ns + limits.idle_ns) {}

  // Monotonic; moved only by the time tests ran.
  std::int64_t deadline_ns() const noexcept { return deadline_ns_; }
  // Throws protocol_error naming what the protocol does not allow here, or past the deadline or a limit.
  step on_message(const netperf::block& b, std::int64_t now_ns);
  // A request on_message said to serve was refused after all. Throws protocol_error past max_refusals.
  void refused();
  void test_began(std::int64_t now_ns);
  void test_ended(std::int64_t now_ns);
  [[noreturn]] void bytes_during_test();

  bool testing() const noexcept { return testing_; }
  std::uint32_t tests() const noexcept { return tests_; }
  std::uint32_t refusals() const noexcept { return refusals_; }
  std::uint32_t messages() const noexcept { return messages_; }

 private:
  step refusal(std::int32_t type, std::int32_t errno_value, std::string why);
  [[noreturn]] void fail(const std::string& what);

  netperf_exchange_limits limits_;
  std::int64_t deadline_ns_;
  std::int64_t test_began_ns_ = 0;
  bool testing_ = false;
  bool closed_ = false;  // after a protocol_error nothing more is taken
  std::uint32_t messages_ = 0, tests_ = 0, refusals_ = 0;
};

}  // namespace nb::serve
