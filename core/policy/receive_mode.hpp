#pragma once
// How a TCP receiver takes its bytes in: copied out to the program (as iperf3 and iperf2 do) or
// discarded in the kernel (MSG_TRUNC: counted, never copied), and why that way. Chosen by netload for
// either direction's receiver (netserve forward, itself in reverse), from where its peer is, unless the
// user said which; the result says what ran and why.
#include "core/result/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace nb {

enum class recv_mode { automatic, copy, discard };

// "auto", "copy", "discard".
std::string_view to_string(recv_mode m);
std::optional<recv_mode> parse_recv_mode(std::string_view text);

// Where the two ends run, as far as the choice needs to know.
struct receive_setting {
  bool shared_host = false;  // the peer's address is this host's own (loopback, or one of its interfaces)
  std::uint32_t streams = 1;
};

// The mode that runs: `asked` unless automatic; automatic copies only where one stream's sender and
// receiver share a host (receive_mode.cpp says why, with the figures), and discards everywhere else.
receive_figures choose_receive(recv_mode asked, const receive_setting& where);

// One line for the table: "copy (automatic: sender and receiver share this host, one stream)".
std::string receive_words(const receive_figures& f);

}  // namespace nb
