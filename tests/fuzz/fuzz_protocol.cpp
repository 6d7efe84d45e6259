// Fuzz target for the control protocol, the parser that faces the network: any bytes, as a sequence of
// frames, must decode or be refused with protocol_error, never crash, hang or read out of bounds. A test
// request that decodes then goes through netserve's registration rules (core/policy/request_rules.hpp) as a peer
// on this host and as one elsewhere, on a 1500-byte path: what they accept must hold to them.
#include "core/base/port_set.hpp"
#include "core/policy/request_rules.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/protocol.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

const std::vector<std::uint16_t> own_port_numbers{5001, 11256, 11257};

const nb::port_set& own_ports() {
  static const nb::port_set* set = [] {
    auto* s = new nb::port_set;
    for (auto p : own_port_numbers) s->add(p);
    return s;
  }();
  return *set;
}

bool accepted(const nb::test_request& r, const nb::data_peer& peer) {
  try {
    nb::check_request(r, {});
    nb::check_data_peer(r, peer);
    return true;
  } catch (const nb::protocol_error&) {
    return false;
  }
}

// The registration rules on a request that decoded: whatever they accept is a test netserve may run.
void check_registration(const nb::test_request& r) {
  for (bool local : {true, false}) {
    const nb::data_peer peer{"198.18.0.2", local, &own_ports(), 1500, AF_INET};
    if (!accepted(r, peer)) continue;
    if (r.streams < 1 || r.streams > nb::max_streams_per_test || !(r.duration_s > 0)) __builtin_trap();
    if (!nb::is_udp(r.kind)) continue;
    if (r.data_ports.size() != r.streams) __builtin_trap();
    // Nothing netserve sends would leave in fragments...
    if (nb::udp_bytes_sent(r) > static_cast<std::uint32_t>(nb::max_udp_payload(1500, AF_INET))) __builtin_trap();
    // ... or come back to it.
    for (auto port : r.data_ports)
      if (local && std::binary_search(own_port_numbers.begin(), own_port_numbers.end(), port)) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::size_t pos = 0;
  while (pos + nb::frame_header_size <= size) {
    unsigned char header[nb::frame_header_size];
    std::memcpy(header, data + pos, sizeof header);
    pos += sizeof header;
    std::size_t len = 0;
    try {
      len = nb::decode_frame_length(header);
    } catch (const nb::protocol_error&) {
      return 0;  // netserve closes the connection here
    }
    if (len > size - pos) len = size - pos;  // a truncated frame: decode what arrived
    try {
      nb::message m = nb::decode_payload(std::string_view(reinterpret_cast<const char*>(data + pos), len));
      // What decodes must encode again and decode to the same type.
      nb::message again = nb::decode_payload(nb::encode_payload(m));
      if (again.index() != m.index()) __builtin_trap();
      if (const auto* r = std::get_if<nb::test_request>(&m)) check_registration(*r);
    } catch (const nb::protocol_error&) {
    }
    pos += len;
  }
  return 0;
}
