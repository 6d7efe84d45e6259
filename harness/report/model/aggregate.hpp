#pragma once
// From raw instance records to per-run figures: per instance, the plain sum over instances (what users
// add up by hand), and the steady-state aggregate over the wall-clock window in which every instance was
// sending, after the warm-up. A run with a failed instance reports its failures, never a number for them;
// an instance that started late (after T0 + the skew bound) counts, and marks its run skewed (skew.hpp).
#include "core/result/result.hpp"
#include "harness/plan/plan.hpp"
#include "harness/report/model/latency.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace harness {

struct instance_record {
  std::string name, client, server, client_address, server_address, category;
  int exit_code = -1;
  bool timed_out = false;
  std::string error;  // why the harness could not get a result (start failure, crash, bad output)
  std::string stderr_text;
  std::optional<nb::test_result> result;
  // The per-second samples the harness received live, kept when the result lacks them (netload died,
  // or failed when its netserve did): what was measured up to the failure. Empty otherwise.
  nlohmann::json samples = nlohmann::json::array();
  std::vector<std::string> problems;  // filled by check(): why this instance does not count
  // Stopped by a signal: its result (when there is one) is netload's partial one (its "interrupted"
  // object), or the run it belongs to was interrupted.
  bool interrupted = false;
};

struct run_record {
  nlohmann::json spec;  // raw/<run>/run.json
  std::string id, test, role;
  topology topo = topology::fan_in;
  nb::test_kind kind = nb::test_kind::udp_stream;
  std::uint32_t message_size = 0;
  double t0 = 0, warmup = 0, interval = 1, skew_bound_ms = 20;
  std::string error;  // the run itself failed (a netserve that did not start): why
  // Stopped by a signal (run.json "interrupted"), after measured_s seconds of its duration.
  bool interrupted = false;
  double measured_s = 0, duration = 0;
  std::vector<instance_record> instances;
  std::optional<instance_record> probe;  // the latency probe beside the load, when the plan asked for one
};

struct rates {
  std::uint64_t packets = 0, bytes = 0;
  double pps = 0, bps = 0;
};

// What an instance counted before a stop: its partial result's totals, or else the sum of its per-second
// samples (its result's intervals, or the ones the harness received live).
struct measured_part {
  rates sender, receiver;
  double seconds = 0;  // the time the counts cover
};
std::optional<measured_part> measured_until_stop(const instance_record& i);
// The instance's per-second samples: its result's, or else those the harness received live.
// One live sample as the harness kept it (netload's interval line); throws std::runtime_error naming the
// field when it is not one.
nb::interval_figures sample_interval(const nlohmann::json& sample);
std::vector<nb::interval_figures> intervals_of(const instance_record& i);

struct steady_state {
  std::int64_t start_ns = 0, end_ns = 0;  // wall clock, the window every instance was sending in
  int slots = 0;                          // per-second samples (intervals) inside it, per instance
  rates sender, receiver;
};

// An instance that started after T0 + the run's start-skew bound.
struct late_start {
  std::string instance;
  double offset_ms = 0;  // its actual start - T0
};

struct run_summary {
  run_record run;
  bool ok = false;                    // every instance ran and reconciled: the run has figures
  std::vector<std::string> failures;  // "instance: reason"
  std::vector<late_start> late;       // an ok run's instances that started late: the run is skewed
  bool skewed() const { return !late.empty(); }
  rates sender, receiver;  // plain sums of the per-instance figures
  std::uint64_t lost = 0, path_loss = 0, kernel_drops = 0;
  // False when a receiving kernel could not count its socket drops (no SO_MEMINFO): kernel_drops is then
  // no count, and path_loss only an upper bound.
  bool drops_known = true;
  double loss_percent = 0;
  std::optional<steady_state> steady;
  std::string steady_note;                 // why there is no steady-state figure
  std::vector<std::string> target_misses;  // "instance: sent X of Y pps requested (-Z %)": paced, missed by > 1 %
  std::optional<nb::limit_verdict> limit;  // where the limit was: the verdict of most instances
  int limit_votes = 0;                     // how many instances gave it
  std::string limit_instance;              // the instance whose verdict `limit` is: its text holds that
                                           // instance's own figures, never the run's
  bool limit_by_circuit = false;           // `limit` is the emulated circuit's, from its counters
                                           // (report/model/circuit.hpp): no instance's; limit_votes agree
  double start_skew_ms = 0;                // latest - earliest actual start
  double max_start_offset_ms = 0;          // latest actual start - T0
  std::optional<rr_summary> rr;            // request/response runs: the instances' round trips merged
  std::optional<probe_summary> probe;      // a latency probe's round trips, idle and under the load
  // An interrupted run (never ok): what its instances counted until the stop, summed over the
  // `measured_instances` that counted anything; none when no instance did.
  std::optional<measured_part> measured;
  int measured_instances = 0;
};

// An interrupted run's instances, each marked so: what they counted until the stop, summed over the
// `counted` that counted anything; nothing when none did.
std::optional<measured_part> sum_until_stop(std::vector<instance_record>& instances, int& counted);
// "INTERRUPTED after 12.3 s of the run's 30 s", "FAILED", "SKEWED" (figures, an instance started late),
// or "" for an ok run.
std::string run_state(const run_summary& s);

// Marks the instance's problems: no result, failed, counts not reconciled (a late start is none: skew.hpp).
void check(instance_record& i);
run_summary summarize(run_record r);
// Packets per second each instance of the run was asked to send (--pps, or --rate over the message
// size); nothing for an unpaced run.
std::optional<double> requested_pps(const run_record& r);
// A trial of a rate search (its run.json says of which): reported inside the search, not on its own.
bool is_search_trial(const run_record& r);

// A drop count for the reports: "unknown" when not known (the kernel could not count; never "0"), and
// the path loss, which is then only an upper bound ("<= N").
std::string drops_text(std::uint64_t drops, bool known);
std::string path_text(std::uint64_t path, bool drops_known);
bool drops_known(const nb::test_result& t);

// Where an instance's data went, from and to: its client and server, the other way round in the reverse
// direction of a bidirectional run (results.cpp), where netload on the client receives.
std::pair<std::string, std::string> data_route(const run_record& r, const instance_record& i);

// netload's result object into i.result, and i.interrupted when it is a partial result after a signal
// ("interrupted": {signal, measured_s, planned_s}). Throws as nb::result_from_json does.
void read_result(instance_record& i, const nlohmann::json& result);
nlohmann::json to_json(const instance_record& i);
instance_record instance_from_json(const nlohmann::json& j);
run_record run_from_json(const nlohmann::json& spec);
nlohmann::json to_json(const run_summary& s);

}  // namespace harness
