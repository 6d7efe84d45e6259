#pragma once
// A rate search's record in RFC 9971's terms: the "search" block of netload --search --json and of the
// harness's search.json and summary.json, written by one serializer and read back by one reader (the
// store, the metrics), which reads the shapes earlier versions wrote too. README: "The search record".
#include "core/search/mlr_search.hpp"

#include <boost/describe/class.hpp>
#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace nb::search {

// The unpaced trial (FD.io CSIT's MRR): what it offered and what it forwarded, packets per second, aggregate.
struct unpaced_rates {
  double offered_rate = 0;
  double forwarding_rate = 0;
};
BOOST_DESCRIBE_STRUCT(unpaced_rates, (), (offered_rate, forwarding_rate))

struct search_record {
  std::vector<goal> goals;
  std::vector<goal_result> goal_results;  // one per goal, in the goals' order
  std::optional<unpaced_rates> mrr;       // none: it did not run to its end
  double trial_seconds = 0;               // every trial run to its end: the unpaced one and any run again included
  bool interrupted = false;               // the user's stop ended the search
  std::string stopped;                    // why the search ended before its goals were done; "" when they were
};

// The goals' results of `s`, or, when no search began (null: the unpaced trial failed or was stopped),
// each goal unsearched with `stopped` (else "not searched") as why. With `interrupted`, a goal not yet
// regular is marked so.
std::vector<goal_result> goal_results_of(const std::vector<goal>& goals, const mlr_search* s, bool interrupted,
                                         const std::string& stopped);

nlohmann::json to_json(const goal& g);
nlohmann::json to_json(const goal_result& r);
// {"procedure", "goals", "mrr" (its rates or null), "goal_results", "trial_seconds", "interrupted", "stopped"}: a
// program adds its own fields beside them (its trials, how its loads split), and to a goal result its own figures.
nlohmann::json to_json(const search_record& r);
// What only the search knows, which netload's record adds: "min_load", "max_load", "start_load" and
// "trials" (each trial as the search was told it, with why it was chosen).
nlohmann::json trials_json(const mlr_search& s);

// A goal written by to_json: its parameters and nothing else. Throws std::runtime_error naming the field.
goal read_goal(const nlohmann::json& j, const std::string& context);
// The record of a "search" block: this version's (the harness's since MLRsearch, which also wrote a goal's
// name beside it), netload's before it (each result's goal by its name, "results": [{"goal": "PDR"}], the
// goals apart) and the harness's before MLRsearch (loss targets in percent, a rate each). Fields a program
// adds are left unread; a missing field or one of the wrong type throws std::runtime_error naming it.
search_record read_search_record(const nlohmann::json& search);

}  // namespace nb::search
