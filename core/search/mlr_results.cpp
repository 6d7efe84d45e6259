// The search's goal results (RFC 9971 section 4.8); their JSON record is search_record.cpp's.
#include "core/search/load_stats.hpp"
#include "core/search/mlr_search.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nb::search {

namespace {

// Some make the result irregular; others leave it regular but must be shown beside it.
std::vector<std::string> irregularities_of(const goal& g, const relevant_bounds& b, const mlr_search& s) {
  std::vector<std::string> out;
  const auto& trials = s.trials();
  if (!b.upper) {
    if (b.lower && same_load(*b.lower, s.max_load()))
      out.push_back(
          fmt::format("max load is a lower bound ({:.0f}): the SUT may forward more than was offered", *b.lower));
    else out.push_back("no upper bound found");
  }
  if (!b.lower) {
    if (b.upper && same_load(*b.upper, s.min_load()))
      out.push_back(fmt::format("min load is an upper bound ({:.0f})", *b.upper));
    else out.push_back("no lower bound found");
  }
  if (b.lower && b.upper && !within_width(*b.lower, *b.upper, g.width))
    out.push_back(fmt::format("relevant bounds {:.4f} apart, wider than the goal width {}",
                              relative_width(*b.lower, *b.upper), g.width));
  for (double x : b.inverted)
    out.push_back(fmt::format(
        "loss not monotonic in load: {:.0f} is a lower bound above the relevant upper bound {:.0f}", x, *b.upper));
  const auto failed = std::count_if(trials.begin(), trials.end(), [](const auto& t) { return !t.ran; });
  if (failed > 0) out.push_back(fmt::format("{} trial(s) failed to run", failed));
  const auto limited =
      std::count_if(trials.begin(), trials.end(), [](const auto& t) { return t.ran && t.load_limited; });
  if (limited > 0)
    out.push_back(
        fmt::format("{} trial(s) could not be offered at their load (sender-limited): max load lowered to {:.0f}",
                    limited, s.max_load()));
  return out;
}

}  // namespace

std::vector<goal_result> mlr_search::results() const {
  std::vector<goal_result> out;
  for (std::size_t i = 0; i < goals_.size(); ++i) {
    const goal& g = goals_[i];
    const auto b = find_relevant_bounds(g, trials_);
    goal_result r;
    r.g = g;
    r.relevant_upper_bound = b.upper;
    // Without an upper bound, the largest lower bound as an effective one, as the RFC recommends.
    r.relevant_lower_bound = b.lower;
    if (b.lower) r.conditional_throughput = conditional_throughput_at(g, *b.lower, trials_);
    r.regular = b.lower && b.upper && within_width(*b.lower, *b.upper, g.width);
    r.irregularities = irregularities_of(g, b, *this);
    if (trials_.size() >= trial_limit_ && !r.regular)
      r.irregularities.push_back(fmt::format("stopped at the limit of {} trials", trial_limit_));
    if (stopped_by_failures()) r.irregularities.push_back("stopped: two trials in a row failed to run");
    r.trial_seconds = state_[i].trial_seconds;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace nb::search
