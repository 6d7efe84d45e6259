#pragma once
// netload --bidir: a forward and a reverse test to one netserve port, started at one instant; to netserve
// they are two tests, each reconciling on its own.
#include "netload/cli/cli.hpp"

namespace nb::load {

// Returns the worse exit status of the two.
int run_bidir(const client_options& o);

}  // namespace nb::load
