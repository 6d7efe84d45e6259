#pragma once
// netload's output: netperf's classic tables with packets per second and loss under them, or JSON.
#include "core/result.hpp"
#include "netload/cli.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace nb::load {

// The table, then with -c / -C each host's CPU use and service demand, then the verdict's Limit line.
std::string format_table(const test_result& r, bool local_cpu = false, bool remote_cpu = false);
std::string format_interval_line(const interval_figures& i, std::int64_t test_start_ns);
nlohmann::json options_json(const client_options& o);
nlohmann::json interval_event(const interval_figures& i);

}  // namespace nb::load
