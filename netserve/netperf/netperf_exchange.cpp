#include "netserve/netperf/netperf_exchange.hpp"

#include "core/wire/native/protocol.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

namespace nb::serve {

namespace np = netperf;

void netperf_exchange::fail(const std::string& what) {
  closed_ = true;
  throw protocol_error(what);
}

netperf_exchange::step netperf_exchange::refusal(std::int32_t type, std::int32_t errno_value, std::string why) {
  refused();
  step s;
  s.what = verdict::refuse;
  s.type = type;
  s.errno_value = errno_value;
  s.why = std::move(why);
  return s;
}

void netperf_exchange::refused() {
  if (++refusals_ > limits_.max_refusals)
    fail(fmt::format("more than {} messages refused on one connection (a netperf client exits at the first)",
                     limits_.max_refusals));
}

netperf_exchange::step netperf_exchange::on_message(const np::block& b, std::int64_t now_ns) {
  if (closed_) throw protocol_error("the netperf connection is closed");
  if (testing_) bytes_during_test();
  if (now_ns > deadline_ns_)
    fail(fmt::format("the netperf exchange ran past its deadline ({:g} s outside its tests)",
                     static_cast<double>(limits_.idle_ns) / 1e9));
  const std::int32_t type = np::decode_header(b).type;
  ++messages_;
  if (type == np::type_passphrase) {
    // Ignored, as by a netserver without one.
    if (messages_ == 1) return {};
    fail("a passphrase (type 6) after the first message: netperf sends it first or not at all");
  }
  if (type == np::type_setup || type == np::type_results)
    fail(fmt::format("a {} (type {}) from the client: only a server sends it",
                     type == np::type_setup ? "setup response" : "results message", type));
  if (type != np::type_request)
    return refusal(type, np::unknown_test_errno,
                   fmt::format("request type {} (a test netperf does not run as OMNI)", type));
  if (tests_ >= limits_.max_tests)
    fail(fmt::format("a request past the {}th test on one connection (netperf -i runs {} at most)", limits_.max_tests,
                     limits_.max_tests));
  step s;
  try {
    s.request = np::decode_request(b);
  } catch (const protocol_error& e) {
    return refusal(np::type_setup, EINVAL, e.what());
  }
  s.what = verdict::serve;
  return s;
}

void netperf_exchange::test_began(std::int64_t now_ns) {
  testing_ = true;
  ++tests_;
  test_began_ns_ = now_ns;
}

void netperf_exchange::test_ended(std::int64_t now_ns) {
  testing_ = false;
  deadline_ns_ += std::max<std::int64_t>(0, now_ns - test_began_ns_);
}

void netperf_exchange::bytes_during_test() {
  fail("a message during a test: netperf sends nothing on its control connection until it has read the results");
}

}  // namespace nb::serve
