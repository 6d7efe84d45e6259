// Fuzz target for the control protocol, the parser that faces the network: any bytes, as a sequence of
// frames, must decode or be refused with protocol_error, never crash, hang or read out of bounds.
#include "core/protocol.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

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
    } catch (const nb::protocol_error&) {
    }
    pos += len;
  }
  return 0;
}
