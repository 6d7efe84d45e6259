#pragma once
// Command-line overrides of a plan (`harness run --duration 5 --repeats 2 --only pps`): a shorter or
// narrower run without copying the plan file. The results folder keeps the plan as it ran, so the
// plan's text is rewritten with them too.
#include "harness/plan/plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace harness {

struct plan_overrides {
  std::optional<double> duration;  // seconds per test: every test's duration (a search's final trials)
  std::optional<int> repeats;      // every test's repeats
  std::vector<std::string> only;   // test names to keep; each may be a comma list ("pps,bps")
  bool empty() const { return !duration && !repeats && only.empty(); }
  // "--duration 5 --repeats 2 --only pps,bps": the options as given.
  std::string command_line() const;
};

// Applies `o` to `p`: the tests not named by --only left out (a name the plan does not have: plan_error
// listing its tests), duration and repeats set in [defaults] and every test. A warmup keeps at most half
// of a shortened test (as a search trial's does), and a search's trials are no longer than its finals.
// Returns what changed, one line each ("duration 300 s -> 5 s"), and rewrites p.source_text to the plan
// as it will run, headed by a comment saying so.
std::vector<std::string> apply_overrides(plan& p, const plan_overrides& o);

// `text` with `o`'s values written in place of the plan's, the tests left out commented out; nullopt when
// the text cannot be rewritten so that it parses back to `want` (a layout the rewrite does not know).
std::optional<std::string> rewrite_plan_text(const std::string& text, const plan& want, const plan_overrides& o);

}  // namespace harness
