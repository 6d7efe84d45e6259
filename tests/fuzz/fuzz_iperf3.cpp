// Fuzz target for what a stock iperf3 client sends netserve: its parameters and its results, JSON behind
// a length. Any bytes must parse or be refused with protocol_error, within the depth and size bounds,
// never crash, hang or read out of bounds; what parses must encode and parse again to the same figures.
#include "core/wire/iperf3/iperf3_wire.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const nb::iperf3::params p = nb::iperf3::parse_params(text);
    const nb::iperf3::params again = nb::iperf3::parse_params(nb::iperf3::encode_params(p));
    if (again.parallel != p.parallel || again.len != p.len || again.num != p.num || again.udp != p.udp ||
        again.reverse != p.reverse || again.congestion != p.congestion)
      __builtin_trap();
  } catch (const nb::protocol_error&) {
  }
  try {
    const nb::iperf3::results r = nb::iperf3::parse_results(text);
    const nb::iperf3::results again = nb::iperf3::parse_results(nb::iperf3::encode_results(r));
    if (again.streams.size() != r.streams.size()) __builtin_trap();
    for (std::size_t i = 0; i < r.streams.size(); ++i)
      if (again.streams[i].bytes != r.streams[i].bytes || again.streams[i].packets != r.streams[i].packets ||
          again.streams[i].retransmits != r.streams[i].retransmits)
        __builtin_trap();
  } catch (const nb::protocol_error&) {
  }
  return 0;
}
