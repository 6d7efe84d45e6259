// Copy for one stream to this host: loopback runs TCP's receive work in the sender's softirq unless
// the receiver holds the socket, as a copying one often does (bench/README.md#receive-mode).
#include "core/policy/receive_mode.hpp"

#include <fmt/format.h>

namespace nb {

std::string_view to_string(recv_mode m) {
  switch (m) {
    case recv_mode::copy: return "copy";
    case recv_mode::discard: return "discard";
    case recv_mode::automatic: break;
  }
  return "auto";
}

std::optional<recv_mode> parse_recv_mode(std::string_view text) {
  for (recv_mode m : {recv_mode::automatic, recv_mode::copy, recv_mode::discard})
    if (to_string(m) == text) return m;
  return std::nullopt;
}

receive_figures choose_receive(recv_mode asked, const receive_setting& where) {
  if (asked != recv_mode::automatic) return {std::string(to_string(asked)), false, "as asked"};
  if (where.shared_host && where.streams == 1)
    return {"copy", true,
            "sender and receiver share this host: the copy moves TCP's receive work to the receiver's CPU"};
  if (where.shared_host)
    return {"discard", true,
            fmt::format("sender and receiver share this host, but {} streams' receivers already take "
                        "TCP's receive work: the kernel discards, no copy",
                        where.streams)};
  return {"discard", true, "the receiver is on another host: the kernel discards, no copy"};
}

std::string receive_words(const receive_figures& f) {
  return fmt::format("{} ({}{})", f.mode, f.automatic ? "automatic: " : "", f.why);
}

}  // namespace nb
