#pragma once
// iperf3's client side facing an untrusted server: a state out of its place is a protocol_error.
#include "core/wire/iperf3/iperf3_wire.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nb::iperf3 {

// Results carry the server's own output, intervals and all.
inline constexpr std::size_t max_server_results_size = 4u << 20;

// "state 99 (no iperf3 state)" for a byte that is none.
std::string state_name(signed char s);

// Ends the test at any point; SERVER_ERROR is followed by i_errno and errno.
bool is_refusal(signed char s) noexcept;
// As iperf3's own client words it.
std::string refusal_text(signed char s, std::int32_t code);

// CREATE_STREAMS, TEST_START and TEST_RUNNING, each once and in that order.
class setup_states {
 public:
  enum class step { create_streams, wait, run };
  step take(signed char s);
  const char* awaited() const noexcept;
  const char* last() const noexcept;

 private:
  int taken_ = 0;
};

// `where`: "first", "after TEST_END".
void expect_state(signed char s, state want, std::string_view where);

// Exactly `streams` streams, else protocol_error. Text as sent: the result escapes it once.
struct server_results {
  results figures;
  std::string version;                  // empty: not said
  std::int32_t rcvbuf = 0, sndbuf = 0;  // 0: not said
};
server_results read_server_results(std::string_view json, std::size_t streams);

}  // namespace nb::iperf3
