// How next() chooses a trial, and why: docs/mlrsearch.md.
#include "core/search/mlr_search.hpp"

#include "core/search/load_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nb::search {

namespace {

constexpr std::size_t preceding_stages = 2;
constexpr double widest_stage = 0.5;
// Per-instance rounding.
constexpr double asked_load_tolerance = 1e-3;

std::vector<goal> stages_of(const goal& g) {
  std::vector<goal> out;
  const double first = std::min(g.initial_trial_duration, g.duration_sum);
  for (std::size_t k = 0; k <= preceding_stages; ++k) {
    goal s = g;
    if (k < preceding_stages) {
      const double share = static_cast<double>(k) / static_cast<double>(preceding_stages);
      s.duration_sum = first * std::pow(g.duration_sum / first, share);
      s.final_trial_duration = std::min(g.final_trial_duration, s.duration_sum);
      s.width = std::min(widest_stage, g.width * std::pow(2.0, static_cast<double>(preceding_stages - k)));
      s.name = fmt::format("{} stage {}/{}", g.name, k + 1, preceding_stages + 1);
    }
    out.push_back(s);
  }
  return out;
}

void check_goal(const goal& g) {
  const auto fail = [&](const char* what) {
    throw std::invalid_argument(fmt::format("search goal {}: {}", g.name, what));
  };
  if (!(g.loss_ratio >= 0 && g.loss_ratio < 1)) fail("the loss ratio must be at least 0 and below 1");
  if (!(g.exceed_ratio >= 0 && g.exceed_ratio < 1)) fail("the exceed ratio must be at least 0 and below 1");
  if (!(g.final_trial_duration > 0)) fail("the final trial duration must be positive");
  if (!(g.duration_sum > 0)) fail("the duration sum must be positive");
  if (!(g.width > 0 && g.width < 1)) fail("the width must be above 0 and below 1");
  if (!(g.initial_trial_duration > 0)) fail("the initial trial duration must be positive");
}

}  // namespace

goal ndr_goal() {
  goal g;
  g.name = "NDR";
  g.loss_ratio = 0;
  return g;
}

goal pdr_goal() { return goal{}; }

double trial_result::loss_ratio() const {
  if (sent == 0 || received >= sent) return 0;
  return static_cast<double>(sent - received) / static_cast<double>(sent);
}

double trial_result::forwarding_rate() const { return intended_load * (1 - loss_ratio()); }

std::string_view to_string(load_class c) noexcept {
  switch (c) {
    case load_class::upper_bound: return "upper bound";
    case load_class::lower_bound: return "lower bound";
    case load_class::undecided: return "undecided";
  }
  return "undecided";
}

mlr_search::mlr_search(std::vector<goal> goals, double min_load, double max_load, double start_load)
    : goals_(std::move(goals)), min_load_(min_load), max_load_(max_load), start_load_(start_load) {
  if (goals_.empty()) throw std::invalid_argument("a search needs at least one goal");
  for (const auto& g : goals_) check_goal(g);
  if (!(min_load_ > 0 && max_load_ >= min_load_))
    throw std::invalid_argument(
        fmt::format("search loads: min {} and max {} must be positive, min <= max", min_load_, max_load_));
  start_load_ = std::clamp(std::isfinite(start_load_) ? start_load_ : max_load_, min_load_, max_load_);
  for (const auto& g : goals_) {
    goal_state s;
    s.stages = stages_of(g);
    state_.push_back(std::move(s));
  }
}

load_class mlr_search::classify(const goal& g, double load) const {
  return classify_sums(g, sums_at(g, load, trials_)).result;
}

std::optional<double> mlr_search::conditional_throughput(const goal& g, double load) const {
  return conditional_throughput_at(g, load, trials_);
}

double mlr_search::trial_seconds() const {
  double sum = 0;
  for (const auto& t : trials_) sum += t.duration;
  return sum;
}

bool mlr_search::stopped_by_failures() const {
  return trials_.size() >= 2 && !trials_.back().ran && !trials_[trials_.size() - 2].ran;
}

double mlr_search::highest_offered_in_full() const {
  double highest = 0;
  for (const auto& t : trials_)
    if (is_evidence(t)) highest = std::max(highest, t.intended_load);
  return highest;
}

void mlr_search::record(const trial_result& r) {
  for (auto& s : state_)
    if (s.open) s.trial_seconds += r.duration;
  // Not under a load offered in full: a sender starved for a moment must not cap the search for good.
  if (r.ran && r.load_limited && r.duration > 0) {
    const double offered = static_cast<double>(r.sent) / r.duration;
    const double proven = highest_offered_in_full();
    const bool above_proven = r.intended_load > proven && !same_load(r.intended_load, proven);
    const double floor = std::max(min_load_, above_proven ? proven : 0.0);
    max_load_ = std::max(floor, std::min({max_load_, offered, r.intended_load * (1 - 1e-3)}));
  }
  trial_result t = r;
  const bool asked =
      pending_ && std::abs(t.intended_load - pending_->intended_load) <= asked_load_tolerance * pending_->intended_load;
  if (asked) t.intended_load = pending_->intended_load;
  reasons_.push_back(asked ? pending_->reason : "recorded without a request");
  pending_.reset();
  trials_.push_back(t);
}

std::optional<trial_request> mlr_search::next() {
  const auto close_all = [&] {
    for (auto& s : state_) s.open = false;
    pending_.reset();
    return std::nullopt;
  };
  if (trials_.size() >= trial_limit_ || stopped_by_failures()) return close_all();
  if (!trials_.empty() && !trials_.back().ran) {
    pending_ =
        trial_request{trials_.back().intended_load, trials_.back().duration, "repeating a trial that failed to run"};
    return pending_;
  }
  std::optional<trial_request> best;
  for (auto& s : state_) {
    auto c = advance(s);
    if (!c) continue;
    if (!best || c->intended_load < best->intended_load ||
        (same_load(c->intended_load, best->intended_load) && c->duration > best->duration))
      best = std::move(c);
  }
  pending_ = best;
  return best;
}

bool mlr_search::stage_done(const goal& stage_goal, std::optional<double> lower, std::optional<double> upper) const {
  if (lower && upper) return within_width(*lower, *upper, stage_goal.width);
  if (lower && !upper) return *lower >= max_load_ || same_load(*lower, max_load_);
  if (upper && !lower) return *upper <= min_load_ || same_load(*upper, min_load_);
  return false;
}

std::optional<trial_request> mlr_search::advance(goal_state& s) {
  while (true) {
    const goal& sg = s.stages[s.stage];
    const auto b = find_relevant_bounds(sg, trials_);
    std::optional<trial_request> c;
    if (!stage_done(sg, b.lower, b.upper)) c = candidate(s, sg, b.lower, b.upper);
    if (c) {
      s.open = true;
      return c;
    }
    if (s.stage + 1 == s.stages.size()) {
      s.open = false;
      return std::nullopt;
    }
    s.initial_lower = b.lower;
    s.initial_upper = b.upper;
    s.focus.reset();
    s.up_anchor = s.up_step = s.down_anchor = s.down_step = 0;
    ++s.stage;
  }
}

// A load that loses exactly the goal loss ratio still forwards this: the first guess below an upper bound.
double mlr_search::forwarding_hint(const goal& g, double upper) const {
  double lowest = upper;
  for (const auto& t : trials_)
    if (is_evidence(t) && same_load(t.intended_load, upper)) lowest = std::min(lowest, t.forwarding_rate());
  return lowest / (1 - g.loss_ratio);
}

std::optional<trial_request> mlr_search::candidate(goal_state& s, const goal& sg, std::optional<double> lower,
                                                   std::optional<double> upper) {
  // Strictly between the relevant bounds, so it can only create or tighten one.
  const auto worth = [&](double x) {
    return x >= min_load_ * (1 - 1e-9) && x <= max_load_ * (1 + 1e-9) &&
           !(lower && (x <= *lower || same_load(x, *lower))) && !(upper && (x >= *upper || same_load(x, *upper)));
  };
  const auto request = [&](double x, std::string why) -> std::optional<trial_request> {
    x = std::clamp(x, min_load_, max_load_);
    if (!worth(x)) return std::nullopt;
    s.focus = x;
    return trial_request{x, sg.final_trial_duration, fmt::format("{}: {}", sg.name, why)};
  };
  if (s.focus && worth(*s.focus))
    return trial_request{*s.focus, sg.final_trial_duration, fmt::format("{}: classifying {:.0f}", sg.name, *s.focus)};
  const auto& ilo = s.initial_lower;
  const auto& ihi = s.initial_upper;
  if (lower && upper) return request(std::sqrt(*lower * *upper), "bisecting the relevant bounds");
  if (!lower && !upper) {
    if (ilo && ihi && !within_width(*ilo, *ihi, sg.width))
      return request(std::sqrt(*ilo * *ihi), "halving the previous stage's bounds");
    if (ilo) return request(*ilo, "re-measuring the previous stage's lower bound");
    if (ihi) return request(*ihi, "re-measuring the previous stage's upper bound");
    return request(start_load_, "starting guess (MRR)");
  }
  if (lower) {
    if (ihi && worth(*ihi)) return request(*ihi, "re-measuring the previous stage's upper bound");
    if (s.up_anchor == 0) s.up_step = sg.width;
    else if (*lower > s.up_anchor && !same_load(*lower, s.up_anchor)) s.up_step *= 2;
    s.up_anchor = *lower;
    return request(*lower * (1 + s.up_step), fmt::format("external search up, step {:.3g}", s.up_step));
  }
  if (ilo && worth(*ilo)) return request(*ilo, "re-measuring the previous stage's lower bound");
  double x = 0;
  if (s.down_anchor == 0) {
    s.down_step = sg.width;
    x = std::min(*upper * (1 - s.down_step), forwarding_hint(sg, *upper));
  } else {
    if (*upper < s.down_anchor && !same_load(*upper, s.down_anchor)) s.down_step *= 2;
    x = *upper * (1 - std::min(s.down_step, widest_stage));
  }
  s.down_anchor = *upper;
  return request(x, fmt::format("external search down, step {:.3g}", s.down_step));
}

}  // namespace nb::search
