#pragma once
// The harness's side of a rate search (MLRsearch, RFC 9971; the logic is core/search/mlr_search.hpp):
// an ordinary run read back as a trial, and the search's record for raw/<run>/search.json, summary.json
// and the reports, in the RFC's terms in snake_case. Loads are aggregate packets per second over the
// run's instances, split equally: every load is also given per instance, and the record names the
// conversion ("aggregate = per instance × 8 instances").
#include "core/search/mlr_search.hpp"
#include "core/search/shortfall_rule.hpp"
#include "harness/plan/plan.hpp"
#include "harness/report/model/aggregate.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace harness {

// A trial as the harness ran it: the unpaced maximum ("mrr"), one the search asked for ("search"), or a
// latency step after it ("latency").
struct search_trial {
  std::string run;     // raw/<run>/
  std::string phase;   // "mrr", "search", "latency"
  std::string reason;  // why this load (the search's words)
  nb::search::trial_result result;
  double sent_pps = 0, received_pps = 0;
  std::string failure;  // why it did not run as asked (result.ran is false)
  std::string limit;    // the run's verdict (core/policy/verdict.hpp): where the limit was
  std::string note;     // how the search took it, when not as measured ("run again", ...)
  // Cut short by the user's stop: what its instances counted until then, kept and shown, told to nobody.
  bool interrupted = false;
  std::optional<measured_part> until_stop;
};

// What a finished run measured, as a trial at `intended_load` (aggregate; 0 = unpaced) of `duration`
// seconds. Instances that together sent under 99 % of the load made the trial load-limited.
search_trial search_trial_of(const run_summary& s, std::string phase, double intended_load, double duration);

// What the harness does with a search's trial before the search hears of it, as netload --search does:
// core's shortfall rule (a first shortfall of the senders at a load runs the same request again, untold),
// and two trials told in a row that failed to run are a fault of the hosts, not a figure of the path: the
// search stops (as the core does); a shortfall run again, untold, is no failure and leaves the count as it
// was.
class trial_gate {
 public:
  // True for a first shortfall at its load (its note says so): run the request again, tell nothing.
  bool run_again(search_trial& t);
  // After run_again, for every trial: true when `t` is the second trial told in a row that failed to run.
  bool failed_twice(const search_trial& t);

 private:
  nb::search::shortfall_rule shortfall_;
  bool untold_ = false;  // the last trial judged is run again, untold
  int failed_in_a_row_ = 0;
};

// A latency step: the probe's round trips under a load at a fraction of the PDR's conditional throughput.
struct latency_step {
  std::string name;          // "minimal load", "10 % of PDR", ...
  double fraction = 0;       // of the conditional throughput; 0 for the minimal load
  double intended_load = 0;  // aggregate
  std::string run;
  std::string error;       // the run or its probe failed: no figures
  double loss_ratio = 0;   // of the load, over the step
  nlohmann::json latency;  // the probe's round trips under load (min, p50, p90, p99, p99.9, max in µs, count)
};

struct search_state {
  const search_spec* spec = nullptr;
  std::size_t instances = 1;
  std::uint32_t message_size = 0;
  std::vector<search_trial> trials;              // the MRR first
  std::optional<nb::search::mlr_search> search;  // once the MRR gave the loads
  std::vector<latency_step> latency;
  std::string stopped;       // why the search ended before its goals did; "" otherwise
  bool interrupted = false;  // a user's stop
};

// The search's trials run to their end, the MRR's included, latency steps and a trial a stop cut short not:
// how many, and their trial-seconds.
std::pair<int, double> searched_trials(const search_state& s);

nlohmann::json to_json(const search_trial& t, std::size_t instances, std::uint32_t message_size);
// The record's "search": the core's search record (core/search/search_record.hpp), each load of a goal
// result also per instance and in bits, and the harness's own: the MRR's and every trial's record, the
// conversion, the latency steps.
nlohmann::json to_json(const search_state& s);

// "aggregate = per instance × 8 instances": how every load in the record converts.
std::string load_conversion(std::size_t instances);

}  // namespace harness
