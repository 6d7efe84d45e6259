#pragma once
// A simulated system under test for the rate searches: a loss curve with a knee (nothing lost below
// it; above it the SUT forwards at most the knee's rate), the knee jittering from trial to trial, the
// loss drawn binomially, an optional rare burst of loss (the "infrequent big loss" of RFC 9971's
// exceed ratio), an optional sender ceiling and optional faults. Seeded: a run is reproducible.
#include "core/search/mlr_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <set>

namespace nb::test {

struct simulated_sut {
  double knee = 1e6;             // median of the per-trial knee, packets per second
  double knee_jitter = 0.002;    // its relative standard deviation
  double burst_probability = 0;  // chance that a trial also loses burst_loss of what it sent
  double burst_loss = 0.02;
  double sender_max = 0;                          // > 0: the sender offers no more than this (load_limited above it)
  std::function<double(double load)> extra_loss;  // a further loss ratio at a load (non-monotonic SUTs)
  std::set<int> fail_trials;                      // these trials (1-based) fail to run
  std::mt19937 rng{1};
  int trials = 0;

  // The loads at which each goal's condition holds in the median trial: the knee for a zero loss ratio,
  // above it by the goal loss ratio otherwise (forwarding the knee's rate while losing exactly that).
  double true_load(double goal_loss_ratio) const { return knee / (1 - goal_loss_ratio); }
  // What the conditional throughput should approach: the forwarding rate at the true load.
  double true_forwarding_rate() const { return knee; }

  search::trial_result run(double load, double duration) {
    ++trials;
    search::trial_result r;
    r.intended_load = load;
    r.duration = duration;
    if (fail_trials.count(trials)) {
      r.ran = false;
      return r;
    }
    double offered = load;
    if (sender_max > 0 && load > sender_max) {
      offered = sender_max;
      r.load_limited = true;
    }
    r.sent = static_cast<std::uint64_t>(std::llround(offered * duration));
    std::normal_distribution<double> jitter(0, knee_jitter);
    const double k = knee * std::max(0.0, 1 + jitter(rng));
    double lost = offered > k ? (offered - k) / offered : 0;
    if (std::bernoulli_distribution(burst_probability)(rng)) lost += burst_loss;
    if (extra_loss) lost += extra_loss(load);
    lost = std::clamp(lost, 0.0, 1.0);
    const auto dropped = lost > 0 ? std::binomial_distribution<std::uint64_t>(r.sent, lost)(rng) : 0;
    r.received = r.sent - dropped;
    return r;
  }

  // The unpaced trial (MRR) at the sender's maximum: its forwarding rate is the search's start load.
  double mrr_forwarding_rate(double max_load, double duration = 1) {
    const auto r = run(max_load, duration);
    --trials;  // not one of the search's trials
    return static_cast<double>(r.received) / duration;
  }
};

// Runs a search to its end against the SUT (the search's trial limit bounds it).
inline void run_search(search::mlr_search& s, simulated_sut& sut) {
  while (auto n = s.next()) s.record(sut.run(n->intended_load, n->duration));
}

}  // namespace nb::test
