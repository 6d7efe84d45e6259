#pragma once
// How a TCP receiver takes its bytes in: copied out, or discarded in the kernel (MSG_TRUNC).
#include "core/result/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace nb {

enum class recv_mode { automatic, copy, discard };

std::string_view to_string(recv_mode m);
std::optional<recv_mode> parse_recv_mode(std::string_view text);

struct receive_setting {
  bool shared_host = false;  // the peer's address is one of this host's own
  std::uint32_t streams = 1;
};

// Automatic copies only for one stream to this host (receive_mode.cpp says why).
receive_figures choose_receive(recv_mode asked, const receive_setting& where);

std::string receive_words(const receive_figures& f);

}  // namespace nb
