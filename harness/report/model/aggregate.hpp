#pragma once
// From raw instance records to a run's figures: sums, steady state, failures, skew (docs/reports.md).
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
  std::string error;  // why no result
  std::string stderr_text;
  std::optional<nb::test_result> result;
  // Samples received live, kept when the result lacks them.
  nlohmann::json samples = nlohmann::json::array();
  std::vector<std::string> problems;
  // Stopped by a signal: a partial result, or its run was interrupted.
  bool interrupted = false;
};

struct run_record {
  nlohmann::json spec;  // raw/<run>/run.json
  std::string id, test, role;
  topology topo = topology::fan_in;
  nb::test_kind kind = nb::test_kind::udp_stream;
  std::uint32_t message_size = 0;
  double t0 = 0, warmup = 0, interval = 1, skew_bound_ms = 20;
  std::string error;  // the run itself failed: why
  // Stopped by a signal after measured_s seconds.
  bool interrupted = false;
  double measured_s = 0, duration = 0;
  std::vector<instance_record> instances;
  std::optional<instance_record> probe;
};

struct rates {
  std::uint64_t packets = 0, bytes = 0;
  double pps = 0, bps = 0;
};

// From a partial result's totals, else the sum of its samples.
struct measured_part {
  rates sender, receiver;
  double seconds = 0;
};
std::optional<measured_part> measured_until_stop(const instance_record& i);
// Throws std::runtime_error naming the field when `sample` is no interval line.
nb::interval_figures sample_interval(const nlohmann::json& sample);
std::vector<nb::interval_figures> intervals_of(const instance_record& i);

struct steady_state {
  std::int64_t start_ns = 0, end_ns = 0;  // wall clock: when every instance was sending
  int slots = 0;                          // samples in it, per instance
  rates sender, receiver;
};

struct late_start {
  std::string instance;
  double offset_ms = 0;  // actual start - T0
};

struct run_summary {
  run_record run;
  bool ok = false;                    // every instance reconciled
  std::vector<std::string> failures;  // "instance: reason"
  std::vector<late_start> late;
  bool skewed() const { return !late.empty(); }
  rates sender, receiver;  // plain sums over instances
  std::uint64_t lost = 0, path_loss = 0, kernel_drops = 0;
  // False without SO_MEMINFO: kernel_drops is no count, path_loss an upper bound.
  bool drops_known = true;
  double loss_percent = 0;
  std::optional<steady_state> steady;
  std::string steady_note;                 // why there is no steady-state figure
  std::vector<std::string> target_misses;  // paced, missed by > 1 %
  std::optional<nb::limit_verdict> limit;  // the verdict of most instances
  int limit_votes = 0;
  std::string limit_instance;     // whose verdict `limit` is, figures and all
  bool limit_by_circuit = false;  // `limit` is the circuit's, from its counters (circuit.hpp)
  double start_skew_ms = 0;
  double max_start_offset_ms = 0;
  std::optional<rr_summary> rr;  // round trips merged
  std::optional<probe_summary> probe;
  // Interrupted runs only.
  std::optional<measured_part> measured;
  int measured_instances = 0;
};

// `counted`: how many counted anything.
std::optional<measured_part> sum_until_stop(std::vector<instance_record>& instances, int& counted);
// "INTERRUPTED after 12.3 s of the run's 30 s", "FAILED", "SKEWED", or "" when ok.
std::string run_state(const run_summary& s);

// No result, failed, or unreconciled counts; a late start is none (skew.hpp).
void check(instance_record& i);
run_summary summarize(run_record r);
// Per instance; nothing when unpaced.
std::optional<double> requested_pps(const run_record& r);
bool is_search_trial(const run_record& r);

// "unknown", never "0", when the kernel could not count; path loss is then "<= N".
std::string drops_text(std::uint64_t drops, bool known);
std::string path_text(std::uint64_t path, bool drops_known);
bool drops_known(const nb::test_result& t);

// Client to server, reversed in a bidirectional run's reverse direction.
std::pair<std::string, std::string> data_route(const run_record& r, const instance_record& i);

// i.interrupted for a partial result after a signal. Throws as nb::result_from_json does.
void read_result(instance_record& i, const nlohmann::json& result);
nlohmann::json to_json(const instance_record& i);
instance_record instance_from_json(const nlohmann::json& j);
run_record run_from_json(const nlohmann::json& spec);
nlohmann::json to_json(const run_summary& s);

}  // namespace harness
