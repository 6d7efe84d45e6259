#pragma once
// What netserve makes of a stock netperf client's request (netserve/netperf/netperf_session.hpp): whether it serves
// it, and if not the errno netperf prints; its data thread's plan; the setup response's and the results'
// fields netserve fills from its own counts.
#include "core/sys/endpoint.hpp"
#include "core/wire/netperf/netperf_wire.hpp"
#include "netserve/netperf/netperf_data.hpp"
#include "netserve/server/served_port.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nb::serve {

struct netperf_refusal {
  int errno_value;  // netperf prints "netperf: remote error N" and exits
  std::string why;  // for the log
};

const char* netperf_test_name(const netperf::omni_request& r) noexcept;
// Whether netserve serves the request, within the operator's limits `o`; std::nullopt: it does.
std::optional<netperf_refusal> check_netperf_request(const netperf::omni_request& r, const server_options& o);
// What one recv() of a TCP_STREAM test asks for: the client's -M, or netserve's 128 KiB (netperf sends -1
// for "the server's choice"), at most 1 MiB.
std::uint32_t tcp_read_size(const netperf::omni_request& r) noexcept;
// What the data thread of request `r` does, with `peer` (the control connection's far end), from now.
netperf_plan data_plan_of(const netperf::omni_request& r, const endpoint& peer);
// The setup response to a served request, but for what its data socket says (the port, the buffers).
netperf::omni_setup setup_of(const netperf::omni_request& r);
// The results block netperf reads: this side's counts over `seconds`, and the buffers it had.
netperf::omni_results omni_results_of(const netperf_counts& c, const netperf::omni_setup& setup, double seconds);

}  // namespace nb::serve
