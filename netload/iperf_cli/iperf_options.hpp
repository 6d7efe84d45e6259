#pragma once
// Reading an iperf client command line (netload/iperf_cli/iperf_args.hpp): iperf's options, as iperf's own
// getopt_long reads them, into what they ask for in iperf's terms. Internal to the translation.
#include "netload/iperf_cli/iperf_args.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nb::load::iperf {

// What an iperf client command line asks for, in iperf's own terms; an unset field is the tool's default.
struct request {
  std::string host;                        // -c
  std::optional<std::uint16_t> port;       // -p
  bool udp = false;                        // -u
  std::optional<std::uint64_t> length;     // -l, bytes per write (UDP: the datagram's payload)
  std::optional<double> rate;              // -b, per stream: bits/s, or packets/s with rate_in_pps
  bool rate_in_pps = false;                // iperf2's "-b 1000pps"
  std::optional<double> duration_s;        // -t
  std::optional<double> interval_s;        // -i
  std::uint32_t streams = 1;               // -P
  std::optional<std::uint64_t> window;     // -w, bytes
  std::optional<std::uint32_t> mss;        // -M (netload's --mss)
  char format = 0;                         // -f: k m g K M G (netload's -f), 0 = not given
  std::optional<double> omit_s;            // iperf3 -O: seconds left out at the start
  bool reverse = false;                    // -R
  bool bidir = false;                      // iperf3 --bidir, iperf2 -d: both ways at once
  bool tradeoff = false;                   // iperf2 -r: forward, then reverse
  std::string affinity;                    // iperf3 -A: "n" or "n,m"
  bool json = false, json_stream = false;  // iperf3 -J, --json-stream
  int family = 0;                          // 4 or 6 (-4, -6, iperf2's -V)
  std::string bind;                        // -B
  std::string congestion;                  // iperf3 -C, iperf2 -Z
  std::optional<int> dscp;                 // -S TOS (its DSCP bits), iperf3 --dscp
};

// "iperf3" or "iperf2".
const char* name(iperf_flavour f);

// Reads iperf's command line (without the --iperfN flag) with getopt_long, as iperf does: bundled short
// options (-uP5), a value attached (-l16) or following (-l 16), --long=value or --long value (long names
// whole, not abbreviated). Throws usage_error for an option with no netload equivalent or an unknown one,
// naming it. Returns false after printing help (-h / --help). One thread at a time (getopt's state is global).
bool read_command_line(iperf_flavour f, const std::vector<std::string>& args, request& r);

// The help the translation prints for -h / --help.
std::string help_text(iperf_flavour f);

}  // namespace nb::load::iperf
