#pragma once
// Both rate searches against one simulated SUT (simulated_sut.hpp), for "fewer trial-seconds than
// today's search" comparisons: the harness's rate_search (harness/run/search.hpp: an unpaced trial,
// bisection, full-length finals) and MLRsearch (core/search) started from the same unpaced trial.
// Each returns the trial-seconds it spent (the unpaced trial included) and what it found per goal.
#include "core/search/mlr_search.hpp"
#include "harness/run/search.hpp"
#include "tests/support/simulated_sut.hpp"

#include <optional>
#include <vector>

namespace nb::test {

struct search_cost {
  double trial_seconds = 0;                  // every trial's duration, the unpaced one included
  std::size_t trials = 0;
  std::vector<std::optional<double>> rates;  // per goal: the found rate (forwarding rate for MLRsearch)
};

// The harness's rate_search with `spec` (loss targets in percent) over `instances` instances.
inline search_cost rate_search_cost(simulated_sut& sut, const harness::search_spec& spec, double sender_max,
                                    std::size_t instances = 1) {
  harness::rate_search s(spec, instances);
  search_cost c;
  while (auto n = s.next()) {
    const double load = n->offered_pps > 0 ? n->offered_pps : sender_max;
    const auto r = sut.run(load, n->duration);
    harness::trial_outcome t;
    t.run = "t" + std::to_string(s.trials().size());
    t.phase = n->phase;
    t.offered_pps = n->offered_pps;
    t.target_pct = n->target_pct;
    t.duration = n->duration;
    t.ok = r.ran;
    t.sent = r.sent;
    t.received = r.received;
    t.sent_pps = static_cast<double>(r.sent) / n->duration;
    t.received_pps = static_cast<double>(r.received) / n->duration;
    t.loss_pct = 100 * r.loss_ratio();
    t.sender_limited = n->offered_pps > 0 && r.load_limited;
    c.trial_seconds += n->duration;
    ++c.trials;
    s.record(t);
  }
  for (const auto& r : s.results()) c.rates.push_back(r.rate_pps);
  return c;
}

// MLRsearch for `goals`, after an unpaced trial of `mrr_duration` at sender_max whose forwarding rate
// is the start load; min load one thousandth of sender_max.
inline search_cost mlr_search_cost(simulated_sut& sut, std::vector<search::goal> goals, double sender_max,
                                   double mrr_duration = 1) {
  search::mlr_search s(std::move(goals), sender_max / 1000, sender_max, sut.mrr_forwarding_rate(sender_max, mrr_duration));
  run_search(s, sut);
  search_cost c;
  c.trial_seconds = mrr_duration + s.trial_seconds();
  c.trials = 1 + s.trials().size();
  for (const auto& r : s.results()) c.rates.push_back(r.conditional_throughput);
  return c;
}

}  // namespace nb::test
