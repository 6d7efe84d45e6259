#pragma once
// What netserve makes of a stock netperf client's request: served or refused, its data plan, and the
// setup and results blocks.
#include "core/sys/endpoint.hpp"
#include "core/wire/netperf/netperf_wire.hpp"
#include "netserve/netperf/netperf_data.hpp"
#include "netserve/server/served_port.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nb::serve {

struct netperf_refusal {
  int errno_value;  // netperf prints "remote error N" and exits
  std::string why;  // for the log
};

const char* netperf_test_name(const netperf::omni_request& r) noexcept;
// std::nullopt: served.
std::optional<netperf_refusal> check_netperf_request(const netperf::omni_request& r, const server_options& o);
// The client's -M, at most 1 MiB, or 128 KiB for netperf's -1, "the server's choice".
std::uint32_t tcp_read_size(const netperf::omni_request& r) noexcept;
// Deadline from now; `peer`: the control connection's far end.
netperf_plan data_plan_of(const netperf::omni_request& r, const endpoint& peer);
// But for what the data socket says (its port, buffers).
netperf::omni_setup setup_of(const netperf::omni_request& r);
netperf::omni_results omni_results_of(const netperf_counts& c, const netperf::omni_setup& setup, double seconds);

}  // namespace nb::serve
