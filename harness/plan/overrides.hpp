#pragma once
// `harness run --duration 5 --repeats 2 --only pps`: a shorter or narrower run without copying the plan;
// the results keep the plan as it ran, so its text is rewritten too.
#include "harness/plan/plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace harness {

struct plan_overrides {
  std::optional<double> duration;  // seconds per test (a search's final trials)
  std::optional<int> repeats;
  std::vector<std::string> only;  // each may be a comma list ("pps,bps")
  bool empty() const { return !duration && !repeats && only.empty(); }
  // The options as given.
  std::string command_line() const;
};

// An unknown --only name is a plan_error listing the tests. A warmup keeps at most half of a shortened test.
// Returns each change in words ("duration 300 s -> 5 s"); p.source_text becomes the plan as it will run.
std::vector<std::string> apply_overrides(plan& p, const plan_overrides& o);

// The tests left out commented out; nullopt when the result would not parse back to `want`.
std::optional<std::string> rewrite_plan_text(const std::string& text, const plan& want, const plan_overrides& o);

}  // namespace harness
