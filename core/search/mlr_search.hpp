#pragma once
// MLRsearch, the Multiple Loss Ratio search of RFC 9971, as a state machine that knows nothing of
// processes or sockets: its user asks next() for a trial (a load and a duration), runs it however it
// runs traffic (the harness: eight netload/netserve pairs; netload: one stream to one netserve) and
// record()s what it measured. Every trial counts for every goal. The names are the RFC's.
//
// Loads are intended loads, aggregate, in packets per second (the caller converts to and from its
// per-instance rates and says so). How next() chooses the load and duration: mlr_search.cpp's head.
#include <boost/describe/class.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nb::search {

// A search goal (RFC 9971 section 4.6). Defaults: FD.io CSIT's PDR goal.
struct goal {
  std::string name = "PDR";           // what reports call it: "NDR", "PDR" or the plan's own
  double loss_ratio = 0.005;          // goal loss ratio: trials losing more are high-loss trials
  double exceed_ratio = 0.5;          // goal exceed ratio: the share of high-loss time a lower bound tolerates
  double final_trial_duration = 1;    // seconds; shorter trials can only make a load an upper bound
  double duration_sum = 21;           // seconds of trials at a load before it may be classified a lower bound
  double width = 0.005;               // goal width: (upper - lower) / upper at which the goal is done
  double initial_trial_duration = 1;  // seconds of the first trials at a new load
};
BOOST_DESCRIBE_STRUCT(goal, (),
                      (name, loss_ratio, exceed_ratio, final_trial_duration, duration_sum, width,
                       initial_trial_duration))
goal ndr_goal();  // CSIT's NDR: loss ratio 0, other parameters as above
goal pdr_goal();  // CSIT's PDR: loss ratio 0.005

// One trial's measurement (RFC 9971 section 4.4).
struct trial_result {
  double intended_load = 0;    // packets per second offered, aggregate
  double duration = 0;         // trial duration (the intended one, as the RFC defines it), seconds
  std::uint64_t sent = 0;      // offered count
  std::uint64_t received = 0;  // forwarding count
  bool ran = true;             // false: the trial failed to run (a host fault, not the SUT): no loss ratio
  // The sender could not offer the intended load: it measured the sender, not the SUT at that load, so
  // it enters no sum (like a trial that did not run); the search lowers its max load to what was offered.
  bool load_limited = false;
  double loss_ratio() const;       // (sent - received) / sent; 0 for an empty trial
  double forwarding_rate() const;  // RFC 9971's trial forwarding rate: intended load * (1 - loss ratio)
};

enum class load_class { upper_bound, lower_bound, undecided };
std::string_view to_string(load_class c) noexcept;

// What the search found for one goal (RFC 9971 section 4.8, "Goal Result").
struct goal_result {
  goal g;
  // Without an upper bound there is strictly no relevant lower bound; as the RFC recommends, the
  // largest lower bound is reported as an effective one (with its conditional throughput), the result
  // irregular. None: no load was a lower bound (min load an upper bound, or the search stopped early).
  std::optional<double> relevant_lower_bound;
  std::optional<double> relevant_upper_bound;    // the smallest upper bound; none: no load was one
  std::optional<double> conditional_throughput;  // at the relevant lower bound (RFC 9971 appendix B)
  bool regular = false;                          // the RFC's: both bounds exist and are within the goal width
  // Named conditions for the report. Some are why a result is irregular ("max load is a lower bound",
  // "min load is an upper bound", bounds wider than the width, the search stopped); some leave a
  // regular result regular but must be shown beside it ("loss not monotonic in load: X is a lower bound
  // above the relevant upper bound Y", "N trial(s) failed to run", trials the sender could not offer).
  std::vector<std::string> irregularities;
  double trial_seconds = 0;  // all trial time spent while this goal was open
  // The user's stop ended the search before this goal was regular: its bounds are not established (the
  // search's caller says so; mlr_search never stops by itself this way).
  bool interrupted = false;
};
// For the record (search_record.hpp), which writes the goal as an object of its own and `interrupted` by
// hand (older records lack it).
BOOST_DESCRIBE_STRUCT(goal_result, (),
                      (relevant_lower_bound, relevant_upper_bound, conditional_throughput, regular, irregularities,
                       trial_seconds))

struct trial_request {
  double intended_load = 0;
  double duration = 0;
  std::string reason;  // why this load: "starting guess (MRR)", "PDR: halving the width", ...
};

class mlr_search {
 public:
  // min_load and max_load bound every intended load (max_load: what the sender can offer, the MRR's
  // offered rate); start_load: the first guess, typically the MRR's forwarding rate.
  mlr_search(std::vector<goal> goals, double min_load, double max_load, double start_load);

  std::optional<trial_request> next();  // nothing: every goal is done (or cannot progress)
  // The result of the trial next() asked for; within 0.1 % of the asked load it is taken as at that
  // load (a caller rounding per-instance rates). Any other trial is accepted at its own load.
  void record(const trial_result& r);

  load_class classify(const goal& g, double load) const;  // from every trial at that load so far
  // The RFC's conditional throughput computed at any load (not only the relevant lower bound); none
  // where no full-length trial was measured.
  std::optional<double> conditional_throughput(const goal& g, double load) const;
  std::vector<goal_result> results() const;
  const std::vector<trial_result>& trials() const { return trials_; }
  const std::vector<std::string>& reasons() const { return reasons_; }  // per trial: why next() chose it
  const std::vector<goal>& goals() const { return goals_; }
  double trial_seconds() const;  // the sum of every recorded trial's duration
  double min_load() const { return min_load_; }
  double max_load() const { return max_load_; }  // lowered below a load the sender could not offer
  double start_load() const { return start_load_; }
  // A bound on the trials of one search, so it always ends (a noisy SUT at an unlucky width); at the
  // limit next() returns nothing and every open goal names it.
  void set_trial_limit(std::size_t n) { trial_limit_ = n; }

 private:
  // Each goal is searched in stages (CSIT's "targets"): the goal itself last, before it stages with
  // shorter trial duration sums, shorter trials and twice the width each step back. A stage's relevant
  // bounds are the next stage's initial bracket.
  struct goal_state {
    std::vector<goal> stages;
    std::size_t stage = 0;
    std::optional<double> initial_lower, initial_upper;  // the previous stage's relevant bounds
    std::optional<double> focus;                         // the load being measured until the stage classifies it
    double up_anchor = 0, up_step = 0;                   // external search upwards: from which lower bound, how far
    double down_anchor = 0, down_step = 0;               // and downwards from an upper bound
    bool open = true;
    double trial_seconds = 0;
  };
  std::optional<trial_request> advance(goal_state& s);
  std::optional<trial_request> candidate(goal_state& s, const goal& stage_goal, std::optional<double> lower,
                                         std::optional<double> upper);
  bool stage_done(const goal& stage_goal, std::optional<double> lower, std::optional<double> upper) const;
  double forwarding_hint(const goal& g, double upper) const;
  bool stopped_by_failures() const;
  double highest_offered_in_full() const;  // the highest load of a trial that counts as evidence

  std::vector<goal> goals_;
  double min_load_, max_load_, start_load_;
  std::vector<trial_result> trials_;
  std::vector<std::string> reasons_;
  std::vector<goal_state> state_;
  std::optional<trial_request> pending_;
  std::size_t trial_limit_ = 500;
};

}  // namespace nb::search
