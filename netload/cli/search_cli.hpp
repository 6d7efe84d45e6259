#pragma once
// netload --search on the command line: its option group in --help, and what a search refuses (anything
// that is one test's setting the search chooses itself: -l, --pps, --rate; what it cannot search).
#include "netload/cli/cli.hpp"

#include <CLI/CLI.hpp>

namespace nb::load {

void add_search_options(CLI::App& app, search_options& s);
// After parsing: the goal parameters checked against each other, and every option a search cannot take
// refused with a usage_error that says why. Nothing to do without --search.
void finish_search(client_options& o, const CLI::App& app);

}  // namespace nb::load
