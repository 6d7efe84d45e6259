#pragma once
// A plan expanded into runs: test x message size x repeat (x pair x direction for `pairs`). A run is
// what starts at one instant T0: its servers (one netserve per server host, all its ports) and its
// netload instances.
#include "harness/plan/plan.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace harness {

struct server_spec {
  std::string host;
  std::vector<std::uint16_t> ports;  // as planned; 0 = any free port, the ready line says which
};

struct instance_spec {
  std::string name;                             // file name in raw/<run>/
  std::string client;                           // host running netload
  std::string server;                           // host running netserve
  std::size_t server_index = 0, port_slot = 0;  // into run_spec::servers and its ports
  std::string category;                         // pairs: the path category label
  bool reverse = false;                         // netload --reverse: netserve sends
  bool probe = false;  // the latency probe (test_spec::probe): on the first instance's path, not part of the load
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
  nlohmann::json search_trial;  // a trial of a rate search: {"of", "phase", "intended_load", ...}; null otherwise
  std::vector<server_spec> servers;
  std::vector<instance_spec> instances;  // the load's, then the latency probe's when the test has one
  bool bidirectional = false;            // every instance twice at T0: forward, and reverse on the same port
  const test_spec* spec = nullptr;       // the test it came from (not serialised)

  // The latency probe, when the run has one: it starts probe->idle seconds before T0 and ends with the load.
  const instance_spec* probe() const noexcept {
    return !instances.empty() && instances.back().probe ? &instances.back() : nullptr;
  }
  double probe_lead() const noexcept { return probe() && spec && spec->probe ? spec->probe->idle : 0; }
};

std::vector<run_spec> expand(const plan& p);
// A trial of a search run: the same run at `offered_pps` in all (split evenly over the load's instances;
// 0 = unpaced) for `duration` seconds, under its own id; with the run's latency probe beside the load only
// when `with_probe` (the latency steps after the search).
run_spec trial_of(const run_spec& r, const std::string& id, double offered_pps, double duration, nlohmann::json tag,
                  bool with_probe = false);

// The commands meant for the host (launchers wrap them). Ports are the actual ones once known.
// netserve binds the server host's plan address and, with the host's psk_file, requires a key; netload
// answers with its own host's psk_file when (and only when) the server requires one.
std::vector<std::string> netserve_command(const std::string& program, const host& server,
                                          const std::vector<std::uint16_t>& ports);
// A host run by the local launcher sends from its plan address (netload -L): on loopback, 127.0.0.2..9
// are then eight distinct sources, as eight instances would be. Remote hosts send from their own.
std::string source_address(const host& h);
// netload connects, says "armed" and reads its start instant from stdin: the harness's start barrier.
// `reverse` is the instance's (instance_spec::reverse); `probe`: the run's latency probe (UDP_RR at its
// rate, from the idle lead on) instead of a load instance.
std::vector<std::string> netload_command(const std::string& program, const run_spec& r, const host& server,
                                         std::uint16_t port, const host& client, bool reverse, bool probe = false);

// The run's description as stored in raw/<run>/run.json, enough to rebuild the reports.
nlohmann::json to_json(const run_spec& r, const plan& p);

// What names a measurement in every record that holds one (a run, a search, a group of repeats): its
// test, role, topology, kind and message size.
template <class Measurement>
nlohmann::json measurement_json(const Measurement& m) {
  return {{"test", m.test},
          {"role", m.role},
          {"topology", to_string(m.topo)},
          {"kind", nb::to_string(m.kind)},
          {"message_size", m.message_size}};
}

}  // namespace harness
