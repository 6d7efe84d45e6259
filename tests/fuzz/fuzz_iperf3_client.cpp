// Fuzz target for what an iperf3 server sends netload --peer iperf3: the state bytes, a refusal's codes, the
// results behind their length (iperf3_client_transcript.hpp reads them in netload's order). Any bytes must
// end in a whole exchange or an error, never a crash, a hang or an out-of-bounds read; no state is taken
// twice, the streams are created once at most, and a whole exchange had the setup's three states in order
// and results for its one stream.
#include "core/base/text.hpp"
#include "tests/fuzz/iperf3_client_transcript.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nb::iperf3::transcript t =
      nb::iperf3::read_transcript(std::string_view(reinterpret_cast<const char*>(data), size));
  if (t.setup_states > 3 || t.streams_created > 1) __builtin_trap();
  if (t.error.empty()) {
    if (t.setup_states != 3 || t.streams_created != 1 || t.results.figures.streams.size() != 1) __builtin_trap();
    for (unsigned char c : nb::printable(t.results.version))
      if (c < 0x20 || c == 0x7f) __builtin_trap();
  }
  return 0;
}
