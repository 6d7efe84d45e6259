#pragma once
// netload --search on the command line: its option group, and the one-test options a search refuses.
#include "netload/cli/cli.hpp"

#include <CLI/CLI.hpp>

namespace nb::load {

void add_search_options(CLI::App& app, search_options& s);
// With --search: refuses, saying why, each option a search cannot take.
void finish_search(client_options& o, const CLI::App& app);

}  // namespace nb::load
