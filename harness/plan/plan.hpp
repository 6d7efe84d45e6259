#pragma once
// The typed plan: what a TOML plan file says, checked once at load time. Everything downstream works on
// these structs and never looks at TOML again.
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

// A plan error names the place in the file, as a compiler does: "plan.toml:12:5: message".
struct plan_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class launcher_kind { local, ssh, netns };

struct ssh_options {
  std::string user;                  // empty: ssh's own default
  std::uint16_t port = 0;            // 0: ssh's own default
  std::string identity;              // -i file; empty: agent / default keys
  std::vector<std::string> options;  // extra "-o" values, e.g. "StrictHostKeyChecking=no"
  int connect_timeout = 5;           // seconds, ssh ConnectTimeout
};

struct host {
  std::string name;
  std::string address;
  launcher_kind launcher = launcher_kind::local;
  ssh_options ssh;
  std::string netns;     // namespace name for launcher netns
  std::string bin_dir;   // where netserve / netload live on that host; empty: the harness default
  std::string psk_file;  // key file on that host, for its netserve and netload (--psk-file); empty: none
  // Where its netserve counts forward UDP: the socket path, or xdp at `interface`'s driver (netserve
  // --engine xdp; root on that host), passing counted datagrams on with xdp_pass, in xdp_mode ("" = auto).
  nb::receive_engine engine = nb::receive_engine::socket;
  std::string interface;
  bool xdp_pass = false;
  std::string xdp_mode;
  // The server it runs for the tests: "netserve" (started by the harness), or a stock server already
  // running there on each test's port, "iperf3" (iperf3 -s) or "netserver": the harness starts nothing on
  // it and launches netload with --peer.
  std::string peer = "netserve";
  bool stock_peer() const { return peer != "netserve"; }
};

enum class topology { fan_in, fan_out, pairs };

struct pair_spec {
  std::string from, to, category;
};

// One offered load of a paced test: packets per second or a payload bit rate, per instance.
struct load_level {
  std::optional<double> pps;
  std::optional<std::string> rate;  // "100M", as netload --rate takes it
  std::string label() const;        // "" when unpaced; "p5000", "r100M" for run ids
};

// A rate search: MLRsearch (RFC 9971), with its search goals (core/search/mlr_search.hpp). One unpaced trial
// first (the maximum receive rate, MRR: the maximal load and the starting guess), then the trials the goals
// ask for, every trial counting for every goal.
struct search_spec {
  std::vector<nb::search::goal> goals = default_search_goals();
  // The harness's bound on a search (the MRR and latency steps not counted): a path whose loss never
  // settles could otherwise keep a goal open for long; a search stopped by it says so.
  int max_trials = 200;
  // Given in the older form (loss, trial, final, precision in percent): the goals are its mapping, and a
  // rewritten plan (--duration) writes those keys back, not goals.
  bool older_form = false;

  // FD.io CSIT's goals: NDR (loss ratio 0) and PDR (0.005), exceed ratio 0.5, 1-s trials, a 21-s duration
  // sum, width 0.005.
  static std::vector<nb::search::goal> default_search_goals();
};

// A latency probe beside a test's load (flent's RRUL idea): one UDP_RR netload at a low rate on the first
// instance's path, started `idle` seconds before the load so the report has its round trips idle and
// under load, and the chart their change over the run.
struct probe_spec {
  double pps = 100;         // transactions per second
  std::uint32_t size = 64;  // request and response bytes
  double idle = 2;          // seconds of probing before the load starts
};

struct test_spec {
  std::string name;
  nb::test_kind kind = nb::test_kind::udp_stream;
  std::vector<std::uint32_t> message_sizes;     // more than one: a sweep
  std::vector<load_level> loads{load_level{}};  // per instance; more than one: a sweep; {} = unpaced
  std::optional<search_spec> search;            // a rate search instead of fixed loads
  std::string affinity;                         // netperf's -T l,r: CPUs of netload and of netserve's receiver
  std::uint32_t streams = 1;
  std::uint32_t mss = 0;
  std::string send_buffer, recv_buffer;  // netperf -s / -S
  std::string congestion;                // TCP: netload -K, both ends; empty = each host's default
  std::string recv_size;                 // TCP: netload --recv-size ("64K"); empty = netserve's default
  bool zerocopy = false;                 // TCP: netload --zerocopy
  bool send_copy = false;                // TCP: netload --send-copy (send(), not sendfile())
  std::string recv_mode;                 // TCP: netload --recv-mode (copy, discard); "" = auto, netload's choice
  int dscp = -1;
  bool reverse = false;
  topology topo = topology::fan_in;
  std::string server;                  // fan-in
  std::string client;                  // fan-out
  std::vector<std::string> instances;  // fan-in: client hosts; fan-out: server hosts
  std::vector<pair_spec> pairs;
  bool both_directions = false;      // pairs: each pair again from `to` to `from`, after it
  bool bidirectional = false;        // each instance also in reverse, both at the same T0
  std::vector<std::uint16_t> ports;  // per instance index; 0 = any free port
  std::uint32_t response_size = 1;   // request/response: the answer's bytes (message_size: the request's)
  std::uint32_t burst = 0;           // request/response: transactions in flight beyond the first
  std::optional<probe_spec> probe;   // latency_probe: round trips idle and under this test's load
  double duration = 0, warmup = 0;
  int repeats = 1;
};

struct plan {
  std::string name;
  std::string source_path;
  std::string source_text;
  double duration = 10;  // seconds per test
  double warmup = 1;     // seconds left out of the steady-state window
  int repeats = 1;
  double lead = 0.5;          // seconds from "every instance armed" to the common start instant T0
  double interval = 1.0;      // netload --interval
  double skew_bound_ms = 20;  // an instance starting later than T0 + this marks its run skewed
  double settle = 1.0;        // pause between runs (seconds), so one run's tail does not hit the next
  std::vector<std::uint16_t> ports;
  std::string ports_where;  // "file:line:col" where [defaults] gave them, for errors
  std::map<std::string, host> hosts;
  std::map<std::string, std::vector<std::string>> groups;
  std::vector<test_spec> tests;
  bool has_lab = false;  // the file also has a [lab] table: runs read the emulated circuit's counters
  // What the command line changed (overrides.hpp): its options, and each change in words; environment.json
  // records them beside the rewritten plan.toml.
  std::string override_options;
  std::vector<std::string> overrides;
};

// Parses and checks a plan; throws plan_error naming file:line:col.
plan parse_plan(const std::string& text, const std::string& source_path);
plan load_plan(const std::string& path);

// The words a plan (and raw/<run>/run.json) uses for them: "local", "ssh", "netns"; "fan-in", "fan-out",
// "pairs". nullopt for any other word.
const char* to_string(launcher_kind k);
const char* to_string(topology t);
std::optional<launcher_kind> launcher_named(std::string_view name);
std::optional<topology> topology_named(std::string_view name);

}  // namespace harness
