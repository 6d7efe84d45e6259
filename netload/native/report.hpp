#pragma once
// netload's output: netperf's classic tables with packets per second and loss under them, or JSON.
#include "core/result/result.hpp"
#include "netload/cli/cli.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace nb::load {

// units: -f's letter, 0 for netload's own.
std::string format_table(const test_result& r, bool local_cpu = false, bool remote_cpu = false, char units = 0);
// An interval within omit_s says "(omitted)", as iperf3's -O does.
std::string format_interval_line(const interval_figures& i, std::int64_t test_start_ns, char units = 0,
                                 double omit_s = 0);
// "12.50 Mbit/s"
std::string rate_text(double bits_per_second, char units);
nlohmann::json options_json(const client_options& o);
nlohmann::json interval_event(const interval_figures& i);

}  // namespace nb::load
