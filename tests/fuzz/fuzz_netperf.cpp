// Fuzz target for netperf's control messages, both sides: what a stock netperf client sends netserve (its
// requests) and what a stock netserver answers netload --peer netserver (its setup response, its results).
// The first 656 bytes of the input are the block (zero-filled when shorter). Every decoder must take the
// block or refuse it with protocol_error, never crash or read out of bounds; what decodes must encode and
// decode again to the same fields.
#include "core/wire/netperf_wire.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace np = nb::netperf;

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
  return 0;
}
