// The automatic choice, and why it is where it is.
//
// A discarding receiver (MSG_TRUNC) saves the copy, and where the receiving CPU also takes every
// segment's softirq (a NIC's queue, RPS steered to it; the wire-like veth path) that copy is what limits
// the figure: 1 MiB writes, cubic, one stream measured 2.5 against 1.9 Gbit/s there. Over loopback (or
// to any address of this host, which the kernel loops back the same way) the receiving socket's TCP work
// runs in the *sender's* softirq unless the receiver holds the socket at that moment: a discarding
// receiver holds it briefly and then idles, so one stream's sender does both ends' TCP work on its CPU.
// A copying receiver holds the socket for the length of each copy, the segments queued meanwhile are
// processed on the receiver's CPU, and the work is split between the two: one stream of 1 MiB writes,
// pinned apart, copying measured 38.0 against 31.6 Gbit/s over ten rounds (35.0 against 34.2 over six).
// With several streams the receivers between them hold their sockets often enough to take that work, and
// copying adds to it: five streams, discarding measured 1.05-1.08x copying (bench/run --tcp, medians of
// seven rounds), up to 1.8x in rounds where other load shared the CPUs. Hence: copy for one stream to this
// host, discard for the rest. The same seven rounds could not separate the two modes for one stream on
// loopback (per-round ratios 0.72-1.44x, median 1.01x): the choice there rests on the runs above; on the
// wire-like path discarding led in all four cells (1.04-1.41x).

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
