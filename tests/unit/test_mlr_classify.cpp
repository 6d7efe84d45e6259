// RFC 9971's load classification and conditional throughput on hand-written trial sets, checked
// against the RFC's definitions worked by hand (default goal: exceed ratio 0.5, 1-s final trials,
// 21-s duration sum).
#include "core/search/load_stats.hpp"
#include "core/search/mlr_search.hpp"

#include <catch2/catch.hpp>

namespace {

using nb::search::goal;
using nb::search::load_class;
using nb::search::mlr_search;
using nb::search::trial_result;

// A trial at `load` losing `lost` of `sent` packets.
trial_result trial(double load, double duration, std::uint64_t sent, std::uint64_t lost) {
  trial_result t;
  t.intended_load = load;
  t.duration = duration;
  t.sent = sent;
  t.received = sent - lost;
  return t;
}

// `low` low-loss and `high` high-loss trials (for any loss ratio below 1 %) of `duration` at `load`.
void add(mlr_search& s, double load, int low, int high, double duration = 1) {
  for (int i = 0; i < low; ++i) s.record(trial(load, duration, 1000, 0));
  for (int i = 0; i < high; ++i) s.record(trial(load, duration, 1000, 100));
}

mlr_search searcher(goal g = nb::search::pdr_goal()) { return mlr_search({g}, 1, 1e6, 1000); }

}  // namespace

TEST_CASE("mlr classify: 21 s of 1-s trials, 10 high-loss is a lower bound, 11 an upper bound", "[mlr]") {
  const goal g = nb::search::pdr_goal();
  auto a = searcher();
  add(a, 1000, 11, 10);
  CHECK(a.classify(g, 1000) == load_class::lower_bound);
  auto b = searcher();
  add(b, 1000, 10, 11);
  CHECK(b.classify(g, 1000) == load_class::upper_bound);
}

TEST_CASE("mlr classify: fewer trials are undecided until the missing time cannot change the outcome", "[mlr]") {
  const goal g = nb::search::pdr_goal();
  auto s = searcher();
  CHECK(s.classify(g, 1000) == load_class::undecided);  // never measured
  add(s, 1000, 10, 0);
  CHECK(s.classify(g, 1000) == load_class::undecided);  // 10 low-loss s: 11 missing s could all be high-loss
  add(s, 1000, 1, 0);
  CHECK(s.classify(g, 1000) == load_class::lower_bound);  // 11 of 21 s low-loss whatever comes
  auto u = searcher();
  add(u, 1000, 5, 10);
  CHECK(u.classify(g, 1000) == load_class::undecided);
  add(u, 1000, 0, 1);
  CHECK(u.classify(g, 1000) == load_class::upper_bound);  // 11 high-loss s: more than half of 21
  // Past the duration sum the whole sum grows with the trials: 30 s with 15 high-loss is a lower bound.
  auto v = searcher();
  add(v, 1000, 15, 15);
  CHECK(v.classify(g, 1000) == load_class::lower_bound);
  add(v, 1000, 0, 1);
  CHECK(v.classify(g, 1000) == load_class::upper_bound);
}

TEST_CASE("mlr classify: the intermediate sums and ratios are the RFC's", "[mlr]") {
  const goal g = nb::search::pdr_goal();
  nb::search::duration_sums d;
  d.full_length_low_loss = 6;
  d.full_length_high_loss = 4;
  d.short_low_loss = 1;   // balances 1 s of short high-loss time at exceed ratio 0.5
  d.short_high_loss = 3;  // 2 s of it count
  const auto c = nb::search::classify_sums(g, d);
  CHECK(c.effective_high_loss_sum == Approx(6));
  CHECK(c.effective_full_sum == Approx(12));
  CHECK(c.effective_whole_sum == Approx(21));
  CHECK(c.missing_sum == Approx(9));
  CHECK(c.optimistic_exceed_ratio == Approx(6.0 / 21));
  CHECK(c.pessimistic_exceed_ratio == Approx(15.0 / 21));
  CHECK(c.result == load_class::undecided);
}

TEST_CASE("mlr classify: short trials can make an upper bound, never a lower bound", "[mlr]") {
  const goal g = nb::search::pdr_goal();
  auto s = searcher();
  add(s, 1000, 100, 0, 0.5);  // 50 s of short low-loss trials
  CHECK(s.classify(g, 1000) == load_class::undecided);
  auto u = searcher();
  add(u, 1000, 0, 22, 0.5);  // 11 s of short high-loss trials
  CHECK(u.classify(g, 1000) == load_class::upper_bound);
  add(u, 1000, 2, 0, 0.5);  // 1 s of short low-loss time balances 1 s of it: 10 s left, not above 10.5
  CHECK(u.classify(g, 1000) == load_class::undecided);
  // Long trials are full-length trials.
  auto l = searcher();
  add(l, 1000, 4, 0, 3);
  CHECK(l.classify(g, 1000) == load_class::lower_bound);
}

TEST_CASE("mlr classify: the goal loss ratio itself is low-loss, a zero exceed ratio tolerates no high-loss trial",
          "[mlr]") {
  goal g = nb::search::pdr_goal();
  auto s = searcher();
  for (int i = 0; i < 11; ++i) s.record(trial(1000, 1, 1000, 5));  // exactly 0.005
  CHECK(s.classify(g, 1000) == load_class::lower_bound);
  CHECK(s.classify(nb::search::ndr_goal(), 1000) == load_class::upper_bound);
  g.exceed_ratio = 0;
  auto z = searcher(g);
  add(z, 1000, 20, 0);
  CHECK(z.classify(g, 1000) == load_class::undecided);
  add(z, 1000, 1, 0);
  CHECK(z.classify(g, 1000) == load_class::lower_bound);
  add(z, 1000, 0, 1);
  CHECK(z.classify(g, 1000) == load_class::upper_bound);
}

TEST_CASE("mlr classify: trials that failed to run or could not be offered are no evidence", "[mlr]") {
  const goal g = nb::search::pdr_goal();
  auto s = searcher();
  for (int i = 0; i < 30; ++i) {
    auto t = trial(1000, 1, 1000, 500);
    t.ran = i % 2 == 0;
    t.load_limited = !t.ran ? false : true;
    s.record(t);
  }
  CHECK(s.classify(g, 1000) == load_class::undecided);
}

TEST_CASE("mlr conditional throughput: the exceed-ratio quantile of the full-length loss ratios", "[mlr]") {
  const goal g = nb::search::pdr_goal();
  auto s = searcher();
  for (int i = 0; i < 11; ++i) s.record(trial(1000, 1, 1000, 0));
  for (int i = 0; i < 10; ++i) s.record(trial(1000, 1, 1000, 100));
  CHECK(*s.conditional_throughput(g, 1000) == Approx(1000));  // the 11th smallest of 21 loss ratios is 0
  auto t = searcher();
  for (int i = 0; i < 10; ++i) t.record(trial(1000, 1, 1000, 0));
  for (int i = 0; i < 11; ++i) t.record(trial(1000, 1, 1000, 4));
  CHECK(*t.conditional_throughput(g, 1000) == Approx(996));
  // Fewer than the duration sum: the missing time counts as total loss.
  auto u = searcher();
  for (int i = 0; i < 5; ++i) u.record(trial(1000, 1, 1000, 0));
  CHECK(*u.conditional_throughput(g, 1000) == Approx(0));
  for (int i = 0; i < 6; ++i) u.record(trial(1000, 1, 1000, 3));
  CHECK(*u.conditional_throughput(g, 1000) == Approx(997));  // 11 trials: the largest loss ratio
  CHECK_FALSE(u.conditional_throughput(g, 2000));
  auto v = searcher();  // short trials do not enter it
  add(v, 1000, 30, 0, 0.5);
  CHECK_FALSE(v.conditional_throughput(g, 1000));
}

TEST_CASE("mlr conditional throughput: tenth-of-a-second trials that make a lower bound give its load", "[mlr]") {
  goal g = nb::search::pdr_goal();
  g.final_trial_duration = 0.1;
  g.duration_sum = 1;
  auto s = searcher();
  for (int i = 0; i < 5; ++i) s.record(trial(1000, 0.1, 100, 0));
  CHECK(s.classify(g, 1000) == load_class::lower_bound);
  REQUIRE(s.conditional_throughput(g, 1000));
  CHECK(*s.conditional_throughput(g, 1000) == Approx(1000));
}

TEST_CASE("mlr relevant bounds: smallest upper bound, largest lower bound below it, inverted ones named", "[mlr]") {
  const goal g = nb::search::pdr_goal();
  auto s = searcher();
  add(s, 500, 11, 0);
  add(s, 800, 11, 0);
  add(s, 900, 0, 11);
  add(s, 1200, 11, 0);  // a lower bound above an upper bound
  add(s, 1500, 0, 11);
  add(s, 850, 3, 0);  // undecided
  const auto b = nb::search::find_relevant_bounds(g, s.trials());
  REQUIRE(b.lower);
  REQUIRE(b.upper);
  CHECK(*b.lower == 800);
  CHECK(*b.upper == 900);
  REQUIRE(b.inverted.size() == 1);
  CHECK(b.inverted.front() == 1200);
  const auto r = s.results().front();
  CHECK(r.relevant_lower_bound == 800);
  CHECK(r.relevant_upper_bound == 900);
  CHECK(*r.conditional_throughput == Approx(800));
  CHECK_FALSE(r.regular);  // 11 % apart: wider than 0.005
  CHECK(std::any_of(r.irregularities.begin(), r.irregularities.end(),
                    [](const auto& x) { return x.find("loss not monotonic") != std::string::npos; }));
}
