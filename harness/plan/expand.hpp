#pragma once
// A plan expanded into runs: test x message size x repeat (x pair x direction). A run is what starts at
// one instant T0: one netserve per server host and the netload instances.
#include "harness/plan/plan.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace harness {

struct server_spec {
  std::string host;
  std::vector<std::uint16_t> ports;  // 0 = any free port; the ready line says which
};

struct instance_spec {
  std::string name;  // file name in raw/<run>/
  std::string client;
  std::string server;
  std::size_t server_index = 0, port_slot = 0;  // into run_spec::servers and its ports
  std::string category;                         // pairs: the path category
  bool reverse = false;                         // netserve sends
  bool probe = false;                           // on the first instance's path, not part of the load
};

struct run_spec {
  std::string id;  // raw/<id>/
  std::string test;
  std::string role;  // which side the shared host plays, in words
  topology topo = topology::fan_in;
  nb::test_kind kind = nb::test_kind::udp_stream;
  std::uint32_t message_size = 0;
  int repeat = 1;
  double duration = 0, warmup = 0, interval = 1;
  load_level load;              // per instance; unpaced when empty
  nlohmann::json search_trial;  // a search trial's {"of", "phase", "intended_load", ...}
  std::vector<server_spec> servers;
  std::vector<instance_spec> instances;  // the load's, then the probe's
  bool bidirectional = false;            // each instance also reverse at T0, same port
  const test_spec* spec = nullptr;       // not serialised

  // Starts probe->idle seconds before T0.
  const instance_spec* probe() const noexcept {
    return !instances.empty() && instances.back().probe ? &instances.back() : nullptr;
  }
  double probe_lead() const noexcept { return probe() && spec && spec->probe ? spec->probe->idle : 0; }
};

std::vector<run_spec> expand(const plan& p);
// `offered_pps` in all, split over the load's instances (0 = unpaced), under its own id; the probe only
// `with_probe` (the latency steps after the search).
run_spec trial_of(const run_spec& r, const std::string& id, double offered_pps, double duration, nlohmann::json tag,
                  bool with_probe = false);

// With the host's psk_file netserve requires a key; netload answers with its own only when asked.
std::vector<std::string> netserve_command(const std::string& program, const host& server,
                                          const std::vector<std::uint16_t>& ports);
// Local hosts send from their plan address (netload -L): on loopback 127.0.0.2..9 are distinct sources.
std::string source_address(const host& h);
// netload says "armed" and reads its start instant from stdin: the start barrier.
std::vector<std::string> netload_command(const std::string& program, const run_spec& r, const host& server,
                                         std::uint16_t port, const host& client, bool reverse, bool probe = false);

// Enough to rebuild the reports.
nlohmann::json to_json(const run_spec& r, const plan& p);

// Names a run, a search or a group of repeats in every record.
template <class Measurement>
nlohmann::json measurement_json(const Measurement& m) {
  return {{"test", m.test},
          {"role", m.role},
          {"topology", to_string(m.topo)},
          {"kind", nb::to_string(m.kind)},
          {"message_size", m.message_size}};
}

}  // namespace harness
