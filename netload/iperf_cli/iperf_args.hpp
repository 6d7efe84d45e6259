#pragma once
// netload --iperf3 / --iperf2 ARGS: an iperf client command line as the netload runs doing the same test,
// with each tool's defaults and units. An option without an equivalent is refused, never ignored.
#include "netload/cli/cli.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nb::load {

enum class iperf_flavour { iperf2, iperf3 };

struct iperf_translation {
  iperf_flavour flavour = iperf_flavour::iperf3;
  std::vector<std::string> iperf_args;                 // after the flag
  std::vector<std::vector<std::string>> netload_args;  // per run (iperf2 -r: two)
  std::vector<client_options> runs;
  bool translate_only = false;  // --iperf3-translate / --iperf2-translate

  // Quoted for a POSIX shell, runs joined by " && ": pasted, it runs the same test.
  std::string netload_command() const;
  // "iperf3 -u -l 16 ... = netload -H ...", printed on stderr before the run.
  std::string summary() const;
};

// Whether args (without argv[0]) start with --iperf3, --iperf2 or their -translate forms.
bool is_iperf_command(const std::vector<std::string>& args);

// args[0] is one of those flags; std::nullopt after printing the help (iperf's -h).
std::optional<iperf_translation> translate_iperf(const std::vector<std::string>& args);

}  // namespace nb::load
