#pragma once
// An emulated circuit's counters (run.json "circuit") and what they say of a run's limit: where they hold
// the loss they decide over host-wide counters (docs/reports.md#from-instances-to-a-run).
#include "harness/report/model/aggregate.hpp"

#include <cstdint>
#include <optional>

namespace harness {

struct circuit_counts {
  std::uint64_t limit_dropped = 0;   // nftables rate limit
  std::uint64_t shaper_dropped = 0;  // tbf shaper
  std::uint64_t udp_delivered = 0;
  std::uint64_t dropped() const { return limit_dropped + shaper_dropped; }
};

std::optional<circuit_counts> circuit_of(const run_record& r);

// Its drops are the larger part of the run's loss (control packets count too). False without loss or circuit.
bool circuit_holds_loss(const run_summary& s);

// Where the circuit holds the loss, the limit is the path's; its votes are the instances saying "path".
void judge_by_circuit(run_summary& s);

}  // namespace harness
