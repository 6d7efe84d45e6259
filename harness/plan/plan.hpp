#pragma once
// The typed plan, checked once at load; nothing downstream looks at TOML again.
#include "core/policy/receive_engine.hpp"
#include "core/search/mlr_search.hpp"
#include "core/wire/native/protocol.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// "plan.toml:12:5: message", as a compiler says it.
struct plan_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class launcher_kind { local, ssh, netns };

struct ssh_options {
  std::string user;                  // empty: ssh's default
  std::uint16_t port = 0;            // 0: ssh's default
  std::string identity;              // -i file; empty: agent / default keys
  std::vector<std::string> options;  // extra "-o" values
  int connect_timeout = 5;           // seconds
};

struct host {
  std::string name;
  std::string address;
  launcher_kind launcher = launcher_kind::local;
  ssh_options ssh;
  std::string netns;
  std::string bin_dir;   // empty: the harness default
  std::string psk_file;  // --psk-file on that host; empty: none
  // netserve's receive path for forward UDP; xdp on `interface` needs root there; xdp_mode "" = auto.
  nb::receive_engine engine = nb::receive_engine::socket;
  std::string interface;
  bool xdp_pass = false;
  std::string xdp_mode;
  // "netserve" (started by the harness), or a stock "iperf3" or "netserver" already listening there:
  // nothing is started and netload runs with --peer.
  std::string peer = "netserve";
  bool stock_peer() const { return peer != "netserve"; }
};

enum class topology { fan_in, fan_out, pairs };

struct pair_spec {
  std::string from, to, category;
};

// One offered load, per instance.
struct load_level {
  std::optional<double> pps;
  std::optional<std::string> rate;  // as netload --rate takes it
  std::string label() const;        // "" when unpaced, "p5000", "r100M"
};

// MLRsearch (RFC 9971) with its goals: one unpaced trial first (MRR: the maximal load and first guess),
// then the trials the goals ask for, each counting for every goal.
struct search_spec {
  std::vector<nb::search::goal> goals = default_search_goals();
  // MRR and latency steps not counted: a path whose loss never settles could keep a goal open long.
  int max_trials = 200;
  // The older keys (loss, trial, final, precision): a rewritten plan writes those back, not goals.
  bool older_form = false;

  // FD.io CSIT's: NDR (0) and PDR (0.005), exceed ratio 0.5, 1-s trials, 21-s sum, width 0.005.
  static std::vector<nb::search::goal> default_search_goals();
};

// A low-rate UDP_RR beside a test's load (flent's RRUL), started `idle` seconds early: round trips idle
// and under load.
struct probe_spec {
  double pps = 100;         // per second
  std::uint32_t size = 64;  // request and response bytes
  double idle = 2;          // seconds before the load
};

struct test_spec {
  std::string name;
  nb::test_kind kind = nb::test_kind::udp_stream;
  std::vector<std::uint32_t> message_sizes;     // more than one: a sweep
  std::vector<load_level> loads{load_level{}};  // per instance; {} = unpaced
  std::optional<search_spec> search;            // instead of fixed loads
  std::string affinity;                         // netperf's -T l,r
  std::uint32_t streams = 1;
  std::uint32_t mss = 0;
  std::string send_buffer, recv_buffer;  // netperf -s / -S
  std::string congestion;                // empty: each host's default
  std::string recv_size;                 // empty: netserve's default
  bool zerocopy = false;
  bool send_copy = false;
  std::string recv_mode;  // "" = netload's choice
  int dscp = -1;
  bool reverse = false;
  topology topo = topology::fan_in;
  std::string server;
  std::string client;
  std::vector<std::string> instances;  // fan-in: clients; fan-out: servers
  std::vector<pair_spec> pairs;
  bool both_directions = false;      // pairs: each again from `to` to `from`
  bool bidirectional = false;        // each instance also in reverse, at the same T0
  std::vector<std::uint16_t> ports;  // per instance; 0 = any free port
  std::uint32_t response_size = 1;   // request/response: the answer's bytes
  std::uint32_t burst = 0;           // transactions in flight beyond the first
  std::optional<probe_spec> probe;
  double duration = 0, warmup = 0;
  int repeats = 1;
};

struct plan {
  std::string name;
  std::string source_path;
  std::string source_text;
  double duration = 10;  // seconds
  double warmup = 1;     // seconds left out of the steady state
  int repeats = 1;
  double lead = 0.5;  // seconds from all armed to the common start T0
  double interval = 1.0;
  double skew_bound_ms = 20;  // later starts mark a run skewed
  double settle = 1.0;        // seconds, so one run's tail misses the next
  std::vector<std::uint16_t> ports;
  std::string ports_where;  // "file:line:col", for errors
  std::map<std::string, host> hosts;
  std::map<std::string, std::vector<std::string>> groups;
  std::vector<test_spec> tests;
  bool has_lab = false;  // runs read the emulated circuit's counters
  // The command line's changes (overrides.hpp), recorded in environment.json.
  std::string override_options;
  std::vector<std::string> overrides;
};

// Throws plan_error naming file:line:col.
plan parse_plan(const std::string& text, const std::string& source_path);
plan load_plan(const std::string& path);

// The plan's words ("fan-in"); nullopt for any other.
const char* to_string(launcher_kind k);
const char* to_string(topology t);
std::optional<launcher_kind> launcher_named(std::string_view name);
std::optional<topology> topology_named(std::string_view name);

}  // namespace harness
