#pragma once
// The server side of one netperf control connection as a state machine of its own, without a socket:
// which message may come when, and the connection's one deadline (netserve/netperf/netperf_session.cpp drives it;
// the fuzz target feeds it any bytes). A netperf 2.7 client sends, in order: a passphrase (-Z) first, then
// for each test a request (DO_OMNI; -i runs up to 30 on one connection), answered by the setup response
// and after the test by its results, during which it sends nothing; another request type (-t REM_CPU,
// CPU_CALIBRATE for -C) gets netserver's errno 998, on which netperf exits. So:
//  - the connection has one deadline that no message moves: `idle` for everything outside its tests (the
//    first request, the next one, the answers' writes), to which a test adds only the time it ran (itself
//    bounded: its length plus netperf's padding);
//  - a passphrase after the first message, a message type only a server sends (setup, results), bytes
//    during a test, a test past the 30th, a refusal past `max_refusals`: a protocol_error that names it,
//    and the connection closes.
#include "core/wire/netperf/netperf_wire.hpp"

#include <cstdint>
#include <string>

namespace nb::serve {

struct netperf_exchange_limits {
  std::int64_t idle_ns = 30'000'000'000;  // outside the tests, in all
  std::uint32_t max_tests = 30;           // netperf -i runs 30 iterations at most
  std::uint32_t max_refusals = 4;         // netperf exits at the first; a few for what comes before it
};

class netperf_exchange {
 public:
  enum class verdict { ignore, serve, refuse };
  struct step {
    verdict what = verdict::ignore;
    std::int32_t type = 0;          // refuse: the message type the answer carries
    std::int32_t errno_value = 0;   // refuse: netperf prints it as "remote error N"
    std::string why;                // refuse: for the log
    netperf::omni_request request;  // serve: decoded, not yet checked against netserve's limits
  };

  netperf_exchange(netperf_exchange_limits limits, std::int64_t began_ns) noexcept
      : limits_(limits), deadline_ns_(began_ns + limits.idle_ns) {}

  // By when (monotonic ns) the next message must have come and every answer gone, outside a test.
  std::int64_t deadline_ns() const noexcept { return deadline_ns_; }
  // What to do with message `b`, come at `now_ns`. Throws protocol_error for what the protocol does not
  // allow here (naming it), or past the deadline or a limit.
  step on_message(const netperf::block& b, std::int64_t now_ns);
  // The request on_message said to serve was refused after all (netserve's checks or limits): counted as
  // any refusal. Throws protocol_error past max_refusals.
  void refused();
  // The served request's test runs from `now_ns`; it ends (test_ended) before another message is taken.
  void test_began(std::int64_t now_ns);
  void test_ended(std::int64_t now_ns);
  // Bytes came on the control connection during a test: throws protocol_error.
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
  bool closed_ = false;  // a protocol_error was thrown: nothing more is taken
  std::uint32_t messages_ = 0, tests_ = 0, refusals_ = 0;
};

}  // namespace nb::serve
