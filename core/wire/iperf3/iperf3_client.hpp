#pragma once
// The client's side of iperf3's control protocol (esnet/iperf's iperf_client_api.c), for netload --peer
// iperf3 facing a server it does not trust: the state a server may send at each point, in the one order
// iperf3's server sends them (iperf_server_api.c), the words of its refusals, and what is taken from its
// results. A state out of its place is a protocol_error naming it, so no state makes the client wait or
// work again.
#include "core/wire/iperf3/iperf3_wire.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nb::iperf3 {

// A server's results carry its own output (get_server_output: its JSON, intervals and all): more than the
// parameters' cap, still bounded.
inline constexpr std::size_t max_server_results_size = 4u << 20;

// "TEST_START", "ACCESS_DENIED", ...; "state 99 (no iperf3 state)" for a byte that is none.
std::string state_name(signed char s);

// ACCESS_DENIED, SERVER_ERROR and SERVER_TERMINATE end a test at the server's word, at any point;
// SERVER_ERROR is followed by its i_errno and errno (8 bytes, big-endian).
bool is_refusal(signed char s) noexcept;
// The one line a refusal ends the test with, in the words of iperf3's own client; `code`: SERVER_ERROR's
// i_errno (ignored for the others).
std::string refusal_text(signed char s, std::int32_t code);

// Once it has the parameters, a server sends CREATE_STREAMS, TEST_START and TEST_RUNNING, each once and in
// that order: take() says what the client does for each, and throws protocol_error for any other state
// there (a second CREATE_STREAMS, TEST_START before the streams, an unknown byte), naming it.
class setup_states {
 public:
  enum class step { create_streams, wait, run };
  step take(signed char s);
  // The state the setup waits for next ("CREATE_STREAMS", ...), for a timeout's message.
  const char* awaited() const noexcept;
  // The last state taken, "" before the first.
  const char* last() const noexcept;

 private:
  int taken_ = 0;
};

// Requires `s` to be `want` at a point the protocol allows only it (`where`: "first", "after TEST_END");
// throws protocol_error naming both otherwise.
void expect_state(signed char s, state want, std::string_view where);

// The server's results message (after EXCHANGE_RESULTS): its streams' figures, exactly `streams` of them,
// and its version from its own output ("iperf3 3.12"; empty when its output names none), as sent: the
// result it goes into is made printable once (escape_peer_text, core/result/result.hpp). Throws
// protocol_error for anything else.
struct server_results {
  results figures;
  std::string version;                  // "iperf3 3.12"; empty when its output did not say
  std::int32_t rcvbuf = 0, sndbuf = 0;  // its data socket's buffers; 0: its output did not say
};
server_results read_server_results(std::string_view json, std::size_t streams);

}  // namespace nb::iperf3
