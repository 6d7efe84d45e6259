#include "harness/run/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace harness {

using nlohmann::json;

namespace {

// An instance that sent less than this share of its offered rate did not offer that rate.
constexpr double sender_tolerance = 0.99;
// Loss figures are ratios of integers; equality with a 0 % target must not depend on rounding.
constexpr double loss_epsilon = 1e-9;

}  // namespace

std::string_view phase_name(search_phase p) noexcept {
  switch (p) {
    case search_phase::mrr: return "mrr";
    case search_phase::search: return "search";
    case search_phase::final: return "final";
  }
  return "search";
}

trial_outcome outcome_of(const run_summary& s, search_phase phase, double offered_pps,
                         std::optional<double> target_pct, double duration) {
  trial_outcome t;
  t.run = s.run.id;
  t.phase = phase;
  t.offered_pps = offered_pps;
  t.target_pct = target_pct;
  t.duration = duration;
  t.ok = s.ok;
  if (!s.ok) {
    t.failure = s.failures.empty() ? "no instance ran" : s.failures.front();
    t.failure = t.failure.substr(0, t.failure.find('\n'));
    return t;
  }
  t.sent = s.sender.packets;
  t.received = s.receiver.packets;
  t.sent_pps = s.sender.pps;
  t.received_pps = s.receiver.pps;
  t.loss_pct = s.loss_percent;
  if (s.limit) t.limit = s.limit->limit;
  const double share = offered_pps / static_cast<double>(s.run.instances.size());
  // Whole datagrams: at 5 pps for 1 s an instance sends 5, which is not 1 % short of 5.06. One datagram
  // of slack, then the tolerance.
  for (const auto& i : s.run.instances) {
    const double due = share * i.result->sender.seconds;
    if (offered_pps > 0 && static_cast<double>(i.result->sender.packets) + 1 < sender_tolerance * due) t.sender_limited = true;
  }
  return t;
}

rate_search::rate_search(search_spec spec, std::size_t instances)
    : spec_(std::move(spec)), min_rate_(static_cast<double>(std::max<std::size_t>(instances, 1))),
      state_(spec_.loss_pct.size(), target_state{false, 0, spec_.trial}) {
  for (double target : spec_.loss_pct) results_.push_back({target, std::nullopt, std::nullopt, false, ""});
}

bool rate_search::passes(const trial_outcome& t, double target) const {
  return t.ok && !t.sender_limited && t.loss_pct <= target + loss_epsilon;
}

// The lowest rate known to fail the target: the unpaced trial's sending rate (nothing can be offered
// above it), or a paced trial that lost too much or could not be sent at its rate. A trial that failed
// to run measured nothing about its rate.
double rate_search::lowest_failure(double target) const {
  double hi = trials_.front().sent_pps;
  for (const auto& t : trials_)
    if (t.phase != search_phase::mrr && t.ok && !passes(t, target)) hi = std::min(hi, t.offered_pps);
  return hi;
}

std::optional<double> rate_search::highest_pass_below(double target, double limit, double min_duration) const {
  std::optional<double> lo;
  for (const auto& t : trials_)
    if (t.phase != search_phase::mrr && passes(t, target) && t.offered_pps < limit && t.duration >= min_duration)
      lo = std::max(lo.value_or(0), t.offered_pps);
  return lo;
}

int rate_search::search_trials() const {
  return static_cast<int>(std::count_if(trials_.begin(), trials_.end(), [](const auto& t) { return t.phase == search_phase::search; }));
}

void rate_search::settle(std::size_t i, std::optional<double> rate, bool converged, std::string note) {
  state_[i].settled = true;
  results_[i].rate_pps = rate;
  results_[i].converged = converged;
  results_[i].note = std::move(note);
  for (auto it = trials_.rbegin(); rate && it != trials_.rend(); ++it)
    if (it->phase == search_phase::final && it->target_pct == results_[i].loss_target_pct && it->offered_pps == *rate) {
      results_[i].final = *it;
      break;
    }
}

std::optional<next_trial> rate_search::next() {
  if (trials_.empty()) return next_trial{search_phase::mrr, 0, spec_.trial, std::nullopt};
  // A trial that did not run as asked (an instance failed, started late, or its counts do not reconcile)
  // measured nothing about its rate: it runs once more; failing twice in a row ends the search with the
  // reason rather than read it as loss and walk down to nothing.
  if (const trial_outcome& last = trials_.back(); !last.ok) {
    const bool twice = trials_.size() > 2 && !trials_[trials_.size() - 2].ok;
    if (trials_.size() > 1 && !twice) return next_trial{last.phase, last.offered_pps, last.duration, last.target_pct};
    const std::string why = trials_.size() == 1 ? "the unpaced trial failed: " + last.failure
                                                : fmt::format("trial {} ({}) failed to run, twice: {}", trials_.size(), last.run, last.failure);
    for (std::size_t i = 0; i < state_.size(); ++i)
      if (!state_[i].settled) settle(i, std::nullopt, false, why);
    return std::nullopt;
  }
  for (std::size_t i = 0; i < state_.size(); ++i)
    if (!state_[i].settled)
      if (auto n = next_for(i)) return n;
  return std::nullopt;
}

std::optional<next_trial> rate_search::next_for(std::size_t i) {
  const double target = spec_.loss_pct[i];
  const trial_outcome& mrr = trials_.front();
  if (passes(mrr, target)) {  // the senders' own maximum passed: the path may carry more
    settle(i, mrr.sent_pps, true,
           "the unpaced trial passed: the senders' maximum is the limit (sender-limited), the path may carry more");
    return std::nullopt;
  }
  const double hi = lowest_failure(target);
  const auto lo = highest_pass_below(target, hi, state_[i].duration);
  const bool cap = search_trials() >= spec_.max_trials;
  if (!lo) {
    // First try what the unpaced trial received; below a failure, halve until something passes. After a
    // failed final the shorter trials' passes below it still hint where the answer is: walk down from it
    // in steps that double instead (717 k failed its final: 688 k, 631 k, ... rather than 358 k).
    const bool tried_below_mrr = hi < mrr.sent_pps;
    const auto failed_finals = std::count_if(trials_.begin(), trials_.end(), [&](const auto& t) {
      return t.phase == search_phase::final && t.target_pct == target && !passes(t, target);
    });
    double candidate = tried_below_mrr || mrr.received_pps < min_rate_ ? hi / 2 : mrr.received_pps;
    if (failed_finals > 0) {
      const auto fails_since = std::count_if(trials_.begin(), trials_.end(), [&](const auto& t) {
        return t.phase != search_phase::mrr && t.duration >= state_[i].duration && !passes(t, target);
      });
      const double step = 2 * spec_.precision_pct / 100 * std::pow(2.0, static_cast<double>(fails_since - 1));
      candidate = hi * (1 - std::min(0.5, step));
    }
    if (candidate < min_rate_ || cap) {
      settle(i, std::nullopt, false,
             cap ? fmt::format("no rate passed within {} trials", spec_.max_trials)
                 : fmt::format("no rate passed, down to {:.0f} pps", hi));
      return std::nullopt;
    }
    return next_trial{search_phase::search, candidate, state_[i].duration, std::nullopt};
  }
  const bool converged = hi - *lo <= spec_.precision_pct / 100 * hi;
  if (converged || cap) {
    // The found rate holds only once a full-length trial at it passed; a failed final moves `hi` down.
    const auto final_at_lo = std::find_if(trials_.rbegin(), trials_.rend(), [&](const auto& t) {
      return t.phase == search_phase::final && t.target_pct == target && t.offered_pps == *lo;
    });
    if (final_at_lo != trials_.rend() && passes(*final_at_lo, target)) {
      settle(i, *lo, converged,
             converged ? "" : fmt::format("not converged within {} trials: between {:.0f} and {:.0f} pps", spec_.max_trials, *lo, hi));
      return std::nullopt;
    }
    if (state_[i].finals >= spec_.max_finals) {
      settle(i, std::nullopt, converged, fmt::format("{} final trials failed their target", state_[i].finals));
      return std::nullopt;
    }
    ++state_[i].finals;
    return next_trial{search_phase::final, *lo, spec_.final_s, target};
  }
  return next_trial{search_phase::search, next_rate(*lo, hi, target), state_[i].duration, std::nullopt};
}

// Bisection, except while nothing but the unpaced trial failed above the passing rate: then the
// bracket's top is only what the senders could offer, often far above the answer (a policer passes what
// the unpaced trial received and drops the rest), so the search widens upward from the passing rate
// instead, doubling the step each time (MLRsearch's external search): a few trials when the answer is
// near, a few more than bisection when it is far. Not after an unpaced trial in receive livelock: there
// the more is offered the less arrives, so what it received says nothing of the answer (measured on the
// wire-like path: 30 k pps received unpaced, 680 k carried paced), and bisection is the shorter way.
double rate_search::next_rate(double lo, double hi, double target) const {
  const double mid = (lo + hi) / 2;
  const bool paced_failure_above = std::any_of(trials_.begin(), trials_.end(), [&](const auto& t) {
    return t.phase != search_phase::mrr && t.offered_pps >= hi && !passes(t, target);
  });
  if (paced_failure_above || trials_.front().limit == "receiver-cpu") return mid;
  // Steps taken upward so far: passes from what the unpaced trial received on (a stricter target's
  // passes further down are not steps of this walk).
  const double from = trials_.front().received_pps * (1 - spec_.precision_pct / 100);
  const auto steps = std::count_if(trials_.begin(), trials_.end(), [&](const auto& t) {
    return t.phase != search_phase::mrr && t.offered_pps >= from && passes(t, target);
  });
  const double step = 2 * spec_.precision_pct / 100 * std::pow(2.0, static_cast<double>(std::max<long>(steps, 1) - 1));
  return std::min(mid, lo * (1 + step));
}

void rate_search::record(trial_outcome t) {
  // A failed final: passes of the shorter trials did not hold for the full length, so the search goes
  // on with trials four times longer, and only those count as passes from now on.
  if (t.phase == search_phase::final && t.target_pct && !passes(t, *t.target_pct))
    for (std::size_t i = 0; i < state_.size(); ++i)
      if (spec_.loss_pct[i] == *t.target_pct) state_[i].duration = std::min(spec_.final_s, state_[i].duration * 4);
  trials_.push_back(std::move(t));
}

json to_json(const trial_outcome& t, std::uint32_t message_size) {
  json j = {{"run", t.run}, {"phase", phase_name(t.phase)}, {"offered_pps", t.offered_pps}, {"duration", t.duration}, {"ok", t.ok}};
  if (t.target_pct) j["loss_target_pct"] = *t.target_pct;
  if (!t.ok) {
    j["failure"] = t.failure;
    return j;
  }
  j.update({{"sent", t.sent}, {"received", t.received}, {"sent_pps", t.sent_pps}, {"received_pps", t.received_pps},
            {"received_bits_per_second", t.received_pps * message_size * 8.0}, {"loss_pct", t.loss_pct},
            {"sender_limited", t.sender_limited}, {"limit", t.limit}});
  return j;
}

json rate_search::to_json(std::uint32_t message_size) const {
  json trials = json::array();
  for (const auto& t : trials_) trials.push_back(harness::to_json(t, message_size));
  json results = json::array();
  for (const auto& r : results_) {
    json x = {{"loss_target_pct", r.loss_target_pct}, {"converged", r.converged}, {"note", r.note}};
    x["rate_pps"] = r.rate_pps ? json(*r.rate_pps) : json(nullptr);
    x["rate_bits_per_second"] = r.rate_pps ? json(*r.rate_pps * message_size * 8.0) : json(nullptr);
    x["final"] = r.final ? harness::to_json(*r.final, message_size) : json(nullptr);
    results.push_back(x);
  }
  return {{"settings",
           {{"loss_pct", spec_.loss_pct}, {"trial", spec_.trial}, {"final", spec_.final_s},
            {"precision_pct", spec_.precision_pct}, {"max_trials", spec_.max_trials}, {"max_finals", spec_.max_finals}}},
          {"mrr", trials_.empty() ? json(nullptr) : harness::to_json(trials_.front(), message_size)},
          {"results", results},
          {"trials", trials}};
}

}  // namespace harness
