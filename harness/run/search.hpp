#pragma once
// The rate search: the highest offered rate whose loss stays within a target, per loss target (RFC 2544
// throughput at 0 %, FD.io CSIT's NDR / PDR), as a state machine that knows nothing of processes: the
// runner asks next() for a trial, runs it as an ordinary run and record()s what it measured. So the
// logic is tested against simulated paths, and every decision can be read back from the trial list.
//
// Order, as MLRsearch does it: one unpaced trial first (the procedure's own figure, the maximum receive
// rate, MRR); then short trials bisecting between what that trial received and what it offered, per
// target from the strictest up, every trial so far counting for every target; then a full-length final
// trial at each rate found. A final trial that fails its target is a failing trial like any other: the
// search goes on below it with trials four times longer (up to the final duration), and from then on
// only a pass at least that long counts; up to max_finals finals per target.
#include "harness/report/aggregate.hpp"
#include "harness/plan/plan.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// A trial's part in the search: the unpaced maximum (MRR), a step of the search, or a final trial that
// confirms a loss target's rate. Named in the records and reports as "mrr", "search" and "final".
enum class search_phase { mrr, search, final };
std::string_view phase_name(search_phase p) noexcept;

struct trial_outcome {
  std::string run;                    // raw/<run>/
  search_phase phase = search_phase::search;
  double offered_pps = 0;             // all instances together; 0 = unpaced
  std::optional<double> target_pct;   // final trials: the loss target they check
  double duration = 0;
  bool ok = false;                    // every instance ran and reconciles
  std::string failure;                // the first reason it did not
  std::uint64_t sent = 0, received = 0;
  double sent_pps = 0, received_pps = 0;
  double loss_pct = 0;                // (sent - received) / sent over all instances
  bool sender_limited = false;        // an instance sent under 99 % of its share: not a pass
  std::string limit;                  // the run's verdict (core/wire/verdict.hpp): where the limit was
};

// What a finished run measured, as a trial of a search offering `offered_pps` over its instances.
trial_outcome outcome_of(const run_summary& s, search_phase phase, double offered_pps,
                         std::optional<double> target_pct, double duration);

struct next_trial {
  search_phase phase = search_phase::search;
  double offered_pps = 0;
  double duration = 0;
  std::optional<double> target_pct;
};

struct search_result {
  double loss_target_pct = 0;
  std::optional<double> rate_pps;        // the highest offered rate that passed; none if nothing did
  std::optional<trial_outcome> final;    // the last final trial at it
  bool converged = false;                // the bracket narrowed to the precision within the trial cap
  std::string note;
};

class rate_search {
 public:
  rate_search(search_spec spec, std::size_t instances);

  std::optional<next_trial> next();  // nothing: the search is over
  void record(trial_outcome t);

  const std::vector<trial_outcome>& trials() const { return trials_; }
  const std::vector<search_result>& results() const { return results_; }
  nlohmann::json to_json(std::uint32_t message_size) const;

 private:
  struct target_state {
    bool settled = false;
    int finals = 0;
    double duration = 0;  // of its search trials; a shorter pass does not count for it
  };
  bool passes(const trial_outcome& t, double target) const;
  double lowest_failure(double target) const;
  std::optional<double> highest_pass_below(double target, double limit, double min_duration) const;
  std::optional<next_trial> next_for(std::size_t i);
  double next_rate(double lo, double hi, double target) const;
  void settle(std::size_t i, std::optional<double> rate, bool converged, std::string note);
  int search_trials() const;

  search_spec spec_;
  double min_rate_;  // one packet per second per instance: below that nothing is measured
  std::vector<trial_outcome> trials_;
  std::vector<target_state> state_;
  std::vector<search_result> results_;
};

nlohmann::json to_json(const trial_outcome& t, std::uint32_t message_size);

}  // namespace harness
