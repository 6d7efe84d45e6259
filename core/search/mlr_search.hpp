#pragma once
// The Multiple Loss Ratio search of RFC 9971 as a state machine that knows nothing of sockets: next()
// asks for a trial, record() takes its result. Loads are aggregate intended loads in packets per second.
// How it chooses: docs/mlrsearch.md.
#include <boost/describe/class.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nb::search {

// RFC 9971 section 4.6; the defaults are FD.io CSIT's PDR goal (docs/mlrsearch.md#goals).
struct goal {
  std::string name = "PDR";
  double loss_ratio = 0.005;
  double exceed_ratio = 0.5;
  double final_trial_duration = 1;
  double duration_sum = 21;
  double width = 0.005;  // (upper - lower) / upper
  double initial_trial_duration = 1;
};
BOOST_DESCRIBE_STRUCT(goal, (),
                      (name, loss_ratio, exceed_ratio, final_trial_duration, duration_sum, width,
                       initial_trial_duration))
goal ndr_goal();
goal pdr_goal();

// RFC 9971 section 4.4.
struct trial_result {
  double intended_load = 0;
  double duration = 0;  // the intended one, as the RFC defines it
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  bool ran = true;            // false: a host fault, not the SUT
  bool load_limited = false;  // the sender could not offer the load: it measured the sender
  double loss_ratio() const;  // 0 for an empty trial
  double forwarding_rate() const;
};

enum class load_class { upper_bound, lower_bound, undecided };
std::string_view to_string(load_class c) noexcept;

// RFC 9971 section 4.8, "Goal Result".
struct goal_result {
  goal g;
  std::optional<double> relevant_lower_bound;  // without an upper bound: effective, irregular
  std::optional<double> relevant_upper_bound;
  std::optional<double> conditional_throughput;
  bool regular = false;
  std::vector<std::string> irregularities;  // docs/mlrsearch.md#results
  double trial_seconds = 0;
  bool interrupted = false;  // the user's stop ended the search before this goal was regular
};
// For the record (search_record.hpp), which writes the goal as an object of its own and `interrupted` by
// hand (older records lack it).
BOOST_DESCRIBE_STRUCT(goal_result, (),
                      (relevant_lower_bound, relevant_upper_bound, conditional_throughput, regular, irregularities,
                       trial_seconds))

struct trial_request {
  double intended_load = 0;
  double duration = 0;
  std::string reason;
};

class mlr_search {
 public:
  // max_load: what the sender can offer; start_load: typically the MRR's forwarding rate.
  mlr_search(std::vector<goal> goals, double min_load, double max_load, double start_load);

  std::optional<trial_request> next();  // nothing: every goal is done or cannot progress
  // Within 0.1 % of the asked load a trial counts as at it: the caller may round per-instance rates.
  void record(const trial_result& r);

  load_class classify(const goal& g, double load) const;
  // At any load, not only the relevant lower bound.
  std::optional<double> conditional_throughput(const goal& g, double load) const;
  std::vector<goal_result> results() const;
  const std::vector<trial_result>& trials() const { return trials_; }
  const std::vector<std::string>& reasons() const { return reasons_; }
  const std::vector<goal>& goals() const { return goals_; }
  double trial_seconds() const;
  double min_load() const { return min_load_; }
  double max_load() const { return max_load_; }  // lowered when a sender falls short
  double start_load() const { return start_load_; }
  // So a search always ends, even with a noisy SUT at an unlucky width.
  void set_trial_limit(std::size_t n) { trial_limit_ = n; }

 private:
  // Each goal is searched in stages, the goal itself last (docs/mlrsearch.md#choosing-the-next-trial).
  struct goal_state {
    std::vector<goal> stages;
    std::size_t stage = 0;
    std::optional<double> initial_lower, initial_upper;  // the previous stage's bounds
    std::optional<double> focus;                         // measured until the stage classifies it
    double up_anchor = 0, up_step = 0;                   // external search
    double down_anchor = 0, down_step = 0;
    bool open = true;
    double trial_seconds = 0;
  };
  std::optional<trial_request> advance(goal_state& s);
  std::optional<trial_request> candidate(goal_state& s, const goal& stage_goal, std::optional<double> lower,
                                         std::optional<double> upper);
  bool stage_done(const goal& stage_goal, std::optional<double> lower, std::optional<double> upper) const;
  double forwarding_hint(const goal& g, double upper) const;
  bool stopped_by_failures() const;
  double highest_offered_in_full() const;

  std::vector<goal> goals_;
  double min_load_, max_load_, start_load_;
  std::vector<trial_result> trials_;
  std::vector<std::string> reasons_;
  std::vector<goal_state> state_;
  std::optional<trial_request> pending_;
  std::size_t trial_limit_ = 500;
};

}  // namespace nb::search
