// Fuzz target for netperf's control messages, both sides: what a stock netperf client sends netserve (its
// requests) and what a stock netserver answers netload --peer netserver (its setup response, its results).
// The first 656 bytes of the input are the block (zero-filled when shorter). Every decoder must take the
// block or refuse it with protocol_error, never crash or read out of bounds; what decodes must encode and
// decode again to the same fields.
//
// Then netserve's server side of the connection (netserve/netperf/netperf_exchange.hpp and the request checks of
// netserve/netperf/netperf_plan.hpp): the whole input is the control connection's bytes, taken block by block as
// netserve reads them, with time passing between them (each block's last byte, in quarter seconds) and each
// served request running a test (its second-to-last byte, in seconds). Whatever it is fed, the exchange
// takes no message past its deadline or its limits, and a request it serves and netserve's checks pass is a
// test netserve can run.
#include "core/base/limits.hpp"
#include "core/wire/netperf/netperf_wire.hpp"
#include "netserve/netperf/netperf_exchange.hpp"
#include "netserve/netperf/netperf_plan.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace np = nb::netperf;
using nb::serve::netperf_exchange;

namespace {

constexpr std::int64_t quarter_second = 250'000'000;

// A served request that netserve's checks pass: a test of a bounded length, with sizes and a port it can use.
void check_served(const np::omni_request& r, const nb::serve::server_options& o) {
  if (nb::serve::check_netperf_request(r, o)) return;
  if (r.test_length < 1 || r.test_length > o.max_duration_s) __builtin_trap();
  if (r.data_port != 0 && (r.data_port < 1024 || r.data_port > 65535)) __builtin_trap();
  const std::int64_t most = r.protocol == np::ipproto_udp ? nb::max_udp_message_size : nb::max_tcp_message_size;
  if (r.direction != np::dir_recv &&
      (r.request_size < 1 || r.response_size < 1 || r.request_size > most || r.response_size > most))
    __builtin_trap();
}

void run_exchange(const std::uint8_t* data, std::size_t size) {
  const nb::serve::netperf_exchange_limits limits;
  const nb::serve::server_options options;
  netperf_exchange x(limits, 0);
  std::int64_t now = 0, in_tests = 0;
  for (std::size_t at = 0; at + np::message_size <= size; at += np::message_size) {
    np::block b{};
    std::memcpy(b.data(), data + at, b.size());
    now += b.back() * quarter_second;
    netperf_exchange::step s;
    try {
      s = x.on_message(b, now);
    } catch (const nb::protocol_error&) {
      break;
    }
    if (now - in_tests > limits.idle_ns) __builtin_trap();  // taken past the deadline
    if (s.what == netperf_exchange::verdict::refuse && s.errno_value == 0) __builtin_trap();
    if (s.what != netperf_exchange::verdict::serve) continue;
    check_served(s.request, options);
    x.test_began(now);
    const std::int64_t ran = b[b.size() - 2] * 4 * quarter_second;
    now += ran;
    in_tests += ran;
    x.test_ended(now);
  }
  if (x.tests() > limits.max_tests || x.refusals() > limits.max_refusals + 1) __builtin_trap();
  if (x.messages() > 1 + limits.max_tests + limits.max_refusals + 1) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  np::block b{};
  std::memcpy(b.data(), data, std::min(size, b.size()));
  unsigned char first[5] = {};
  std::memcpy(first, b.data(), sizeof first);
  (void)np::looks_like_request(first);
  (void)np::decode_header(b);
  try {
    const np::omni_request r = np::decode_request(b);
    const np::omni_request again = np::decode_request(np::encode_request(r));
    if (again.test_length != r.test_length || again.direction != r.direction || again.protocol != r.protocol ||
        again.request_size != r.request_size || again.response_size != r.response_size ||
        again.data_port != r.data_port || again.recv_buf_size != r.recv_buf_size ||
        again.cong_control != r.cong_control || again.fill_file != r.fill_file)
      __builtin_trap();
  } catch (const nb::protocol_error&) {
  }
  try {
    const np::omni_setup s = np::decode_setup(b);
    const np::omni_setup again = np::decode_setup(np::encode_setup(s));
    if (again.data_port != s.data_port || again.recv_buf_size != s.recv_buf_size || again.cpu_model != s.cpu_model)
      __builtin_trap();
  } catch (const nb::protocol_error&) {
  }
  try {
    const np::omni_results r = np::decode_results(b);
    const np::omni_results again = np::decode_results(np::encode_results(r));
    if (again.bytes_received != r.bytes_received || again.recv_calls != r.recv_calls ||
        again.bytes_sent != r.bytes_sent || again.trans_received != r.trans_received ||
        again.cong_control != r.cong_control)
      __builtin_trap();
  } catch (const nb::protocol_error&) {
  }
  run_exchange(data, size);
  return 0;
}
