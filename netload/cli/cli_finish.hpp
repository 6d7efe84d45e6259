#pragma once
// The command line as given, and what netload makes of it once parsed: checks across options, defaults.
#include "netload/cli/cli.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nb::load::detail {

struct raw_options {
  std::string peer = "netserve";
  std::string test = "TCP_STREAM", cpus, rate, local_buf, remote_buf, message, recv_size, remote_recv_size, rr_sizes,
              units;
  std::optional<std::uint32_t> burst, test_burst;  // one setting
  std::string recv_mode;                           // with its two short forms: one setting
  bool recv_copy = false, recv_discard = false;
  bool gso = false, no_gso = false;  // one setting
  int routing = 1;
};

// Fills `o` from `raw` and checks the options together; throws usage_error naming the option.
void finish(client_options& o, const raw_options& raw);

}  // namespace nb::load::detail
