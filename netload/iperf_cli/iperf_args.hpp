#pragma once
// netload --iperf3 ARGS... / --iperf2 ARGS...: an iperf client command line, as people already type it,
// translated to the netload command line (iperf2's -r: two, one after the other) that runs the same
// test against a netserve, with each tool's own defaults and units (iperf_args.cpp says which, and
// where in iperf's sources they come from). An iperf option with no netload equivalent is a usage
// error naming it, never ignored.
#include "netload/cli/cli.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nb::load {

enum class iperf_flavour { iperf2, iperf3 };

struct iperf_translation {
  iperf_flavour flavour = iperf_flavour::iperf3;
  std::vector<std::string> iperf_args;                 // iperf's command line as given (after the flag)
  std::vector<std::vector<std::string>> netload_args;  // a netload command line per run, without "netload"
  std::vector<client_options> runs;                    // each parsed from its command line, in order
  bool translate_only = false;                         // --iperf3-translate / --iperf2-translate: print, run nothing

  // "netload -H 127.0.0.1 ... -- -m 16"; iperf2's -r: the two runs joined by " && ". Quoted for a
  // POSIX shell: pasted, it runs the same test.
  std::string netload_command() const;
  // "iperf3 -u -l 16 ... = netload -H ...": the line netload prints on stderr before it runs.
  std::string summary() const;
};

// Whether args (without argv[0]) start with --iperf3, --iperf2, --iperf3-translate or --iperf2-translate.
bool is_iperf_command(const std::vector<std::string>& args);

// args[0] is one of those flags; the rest is iperf's client command line. Throws usage_error naming the
// iperf option that has no netload equivalent, or saying which netload option the translation breaks.
// std::nullopt after printing the translation's help (iperf's -h / --help).
std::optional<iperf_translation> translate_iperf(const std::vector<std::string>& args);

}  // namespace nb::load
