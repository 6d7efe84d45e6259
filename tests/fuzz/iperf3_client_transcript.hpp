#pragma once
// What an iperf3 server sends netload --peer iperf3 over a whole control connection, read in the order
// netload reads it (netload/iperf3/iperf3_peer.cpp) with the same parts (core/wire/iperf3/iperf3_client.hpp): the first
// state, the setup's states, EXCHANGE_RESULTS, the results behind a 4-byte length, DISPLAY_RESULTS; a
// refusal (with SERVER_ERROR's 8 bytes of codes) at any state. The fuzz target and the seeds' unit test
// read a transcript with it.
#include "core/wire/iperf3/iperf3_client.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nb::iperf3 {

struct transcript {
  std::string error;        // why the exchange ended early: a refusal or a protocol_error; "" when whole
  int setup_states = 0;     // CREATE_STREAMS, TEST_START, TEST_RUNNING taken
  int streams_created = 0;  // times the client would have connected its streams
  server_results results;   // when whole
};

namespace detail {

struct ended : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class bytes_in {
 public:
  explicit bytes_in(std::string_view b) : b_(b) {}
  std::string_view take(std::size_t n) {
    if (b_.size() - at_ < n) throw ended("the server closed the control connection");
    const std::string_view out = b_.substr(at_, n);
    at_ += n;
    return out;
  }
  signed char state() {
    const auto s = static_cast<signed char>(take(1)[0]);
    if (is_refusal(s)) {
      std::int32_t code = 0;
      if (static_cast<iperf3::state>(s) == iperf3::state::server_error) {
        const std::string_view c = take(8);
        for (int i = 0; i < 4; ++i)
          code = static_cast<std::int32_t>(static_cast<std::uint32_t>(code) << 8 | static_cast<unsigned char>(c[i]));
      }
      throw ended(refusal_text(s, code));
    }
    return s;
  }

 private:
  std::string_view b_;
  std::size_t at_ = 0;
};

}  // namespace detail

inline transcript read_transcript(std::string_view bytes, std::size_t streams = 1) {
  transcript t;
  detail::bytes_in in(bytes);
  try {
    expect_state(in.state(), state::param_exchange, "first");
    setup_states setup;
    for (;;) {
      const setup_states::step s = setup.take(in.state());
      ++t.setup_states;
      if (s == setup_states::step::create_streams) ++t.streams_created;
      if (s == setup_states::step::run) break;
    }
    expect_state(in.state(), state::exchange_results, "after TEST_END");
    const std::string_view h = in.take(4);
    std::size_t n = 0;
    for (char c : h) n = n << 8 | static_cast<unsigned char>(c);
    if (n > max_server_results_size) throw protocol_error("iperf3 results too long");
    t.results = read_server_results(in.take(n), streams);
    expect_state(in.state(), state::display_results, "after its results");
  } catch (const detail::ended& e) {
    t.error = e.what();
  } catch (const protocol_error& e) {
    t.error = e.what();
  }
  return t;
}

}  // namespace nb::iperf3
