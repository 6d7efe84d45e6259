#pragma once
// netload's output: netperf's classic tables with packets per second and loss under them, or JSON.
#include "core/result/result.hpp"
#include "netload/cli/cli.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace nb::load {

// The table, then with -c / -C each host's CPU use and service demand, then the verdict's Limit line.
// units: -f's letter (client_options::rate_units), 0 for netload's own: Mbit/s, and the TCP_INFO rates
// in the units that suit them.
std::string format_table(const test_result& r, bool local_cpu = false, bool remote_cpu = false, char units = 0);
// omit_s: --omit's seconds; an interval within them says "(omitted)", as iperf3's -O does.
std::string format_interval_line(const interval_figures& i, std::int64_t test_start_ns, char units = 0,
                                 double omit_s = 0);
// A bit rate in -f's units, with the unit: "12.50 Mbit/s".
std::string rate_text(double bits_per_second, char units);
nlohmann::json options_json(const client_options& o);
nlohmann::json interval_event(const interval_figures& i);

}  // namespace nb::load
