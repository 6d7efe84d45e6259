#include "harness/report/model/circuit.hpp"

#include <fmt/format.h>

namespace harness {

std::optional<circuit_counts> circuit_of(const run_record& r) {
  if (!r.spec.is_object()) return std::nullopt;
  const auto c = r.spec.find("circuit");
  if (c == r.spec.end() || !c->is_object()) return std::nullopt;
  const auto count = [&](const char* key) { return c->value(key, std::uint64_t{0}); };
  return circuit_counts{count("limit_dropped"), count("shaper_dropped"), count("udp_delivered")};
}

bool circuit_holds_loss(const run_summary& s) {
  const auto c = circuit_of(s.run);
  return c && s.ok && s.lost > 0 && c->dropped() * 2 >= s.lost;
}

void judge_by_circuit(run_summary& s) {
  if (!circuit_holds_loss(s)) return;
  const circuit_counts c = *circuit_of(s.run);
  s.limit = nb::limit_verdict{
      "path", fmt::format("path loss: the instances lost {}, the circuit dropped {} (its packet-rate limit {}, its "
                          "bit-rate shaper {}; its counts also include the tests' control packets)",
                          s.lost, c.dropped(), c.limit_dropped, c.shaper_dropped)};
  s.limit_by_circuit = true;
  s.limit_instance.clear();
  s.limit_votes = 0;
  for (const auto& i : s.run.instances)
    if (i.result && i.result->verdict && i.result->verdict->limit == "path") ++s.limit_votes;
}

}  // namespace harness
