#pragma once
// An emulated circuit's counters (run.json "circuit", from a plan with a [lab] table) and what they say
// of a run's limit. The circuit counts its own drops; the receiving host's softnet and interface
// counters that the instances' verdicts read are the whole machine's, shared by every namespace on it,
// the circuit's included: where the circuit's counters hold the loss, they decide, as the socket's own
// drop counter decides over the host-wide ones.
#include "harness/report/model/aggregate.hpp"

#include <cstdint>
#include <optional>

namespace harness {

struct circuit_counts {
  std::uint64_t limit_dropped = 0;   // by its packet-rate limit (nftables)
  std::uint64_t shaper_dropped = 0;  // by its bit-rate shaper (tbf)
  std::uint64_t udp_delivered = 0;   // UDP datagrams the receiving hosts' kernels took in
  std::uint64_t dropped() const { return limit_dropped + shaper_dropped; }
};

// The run's circuit counters; none for a run without a circuit.
std::optional<circuit_counts> circuit_of(const run_record& r);

// The circuit's drops are the larger part of what the run's instances lost (its counts also include the
// tests' control packets, a few more). False for a run without loss or without a circuit.
bool circuit_holds_loss(const run_summary& s);

// Where the circuit holds the run's loss, the run's limit is the path's, in the circuit's counts; its
// votes are then the instances whose own verdict says "path" too (limit_by_circuit set). Else the
// instances' verdict stands.
void judge_by_circuit(run_summary& s);

}  // namespace harness
