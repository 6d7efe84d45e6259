// The rate search against simulated paths: it must find a known capacity to its precision, never take a
// sender-limited trial for a pass, resume below a final trial that failed, and always end.
#include "harness/run/search.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

namespace {

using harness::next_trial;
using harness::rate_search;
using harness::search_spec;
using harness::trial_outcome;

// A path and its hosts as a function: offered rate (0 = unpaced) and duration -> what was sent and received.
struct simulated {
  simulated(double max, std::function<double(double, double)> recv, std::string limit = "")
      : sender_max(max), received(std::move(recv)), unpaced_limit(std::move(limit)) {}
  double sender_max;  // what the senders can offer
  std::function<double(double offered, double duration)> received;
  std::string unpaced_limit;  // the verdict of the unpaced trial
};

trial_outcome run(const simulated& p, const next_trial& n, int k) {
  trial_outcome t;
  t.run = "t" + std::to_string(k);
  t.phase = n.phase;
  t.offered_pps = n.offered_pps;
  t.target_pct = n.target_pct;
  t.duration = n.duration;
  t.ok = true;
  const double sent_pps = n.offered_pps > 0 ? std::min(n.offered_pps, p.sender_max) : p.sender_max;
  t.sender_limited = n.offered_pps > 0 && sent_pps < 0.99 * n.offered_pps;
  t.sent = static_cast<std::uint64_t>(sent_pps * n.duration);
  t.received = static_cast<std::uint64_t>(std::min(sent_pps, p.received(sent_pps, n.duration)) * n.duration);
  t.sent_pps = sent_pps;
  t.received_pps = static_cast<double>(t.received) / n.duration;
  if (n.offered_pps == 0) t.limit = p.unpaced_limit;
  t.loss_pct = 100.0 * static_cast<double>(t.sent - t.received) / static_cast<double>(t.sent);
  return t;
}

rate_search search_over(const simulated& p, search_spec spec = {}, std::size_t instances = 2) {
  rate_search s(spec, instances);
  int k = 0;
  while (auto n = s.next()) {
    s.record(run(p, *n, ++k));
    REQUIRE(k < 200);  // it always ends
  }
  return s;
}

// Receive livelock: up to the capacity everything arrives; above it, the more is offered the less
// is received (the receiver's CPU spends itself in softirq), down to 64 k at the senders' maximum.
simulated livelock(double capacity) {
  return {2.2e6, [capacity](double offered, double) {
            if (offered <= capacity) return offered;
            const double slope = (capacity - 64e3) / (2.2e6 - capacity);
            return std::max(64e3, capacity - slope * (offered - capacity));
          }, "receiver-cpu"};
}

int count(const rate_search& s, harness::search_phase phase) {
  const auto& t = s.trials();
  return static_cast<int>(std::count_if(t.begin(), t.end(), [&](const auto& x) { return x.phase == phase; }));
}

}  // namespace

TEST_CASE("search: receive livelock - NDR and PDR within the precision of the capacity, each with a passing final", "[search]") {
  const double capacity = 700e3;
  const auto s = search_over(livelock(capacity));
  REQUIRE(s.trials().front().phase == harness::search_phase::mrr);
  CHECK(s.trials().front().received_pps == Approx(64e3).epsilon(0.01));
  REQUIRE(s.results().size() == 2);
  for (const auto& r : s.results()) {
    INFO("loss target " << r.loss_target_pct << " %: " << r.note);
    REQUIRE(r.rate_pps);
    CHECK(*r.rate_pps <= capacity / (1 - r.loss_target_pct / 100) + 1);
    CHECK(*r.rate_pps >= 0.99 * capacity);
    CHECK(r.converged);
    REQUIRE(r.final);
    CHECK(r.final->phase == harness::search_phase::final);
    CHECK(r.final->duration == 30);
    CHECK(r.final->loss_pct <= r.loss_target_pct);
  }
  CHECK(count(s, harness::search_phase::search) <= 14);  // bisection from what the unpaced trial offered, not a walk from 64 k
  CHECK(count(s, harness::search_phase::final) == 2);
}

TEST_CASE("search: a path with a proportional loss above its capacity - PDR above NDR", "[search]") {
  const double capacity = 100e3;
  // Above the capacity the excess is lost (a policer): loss = (offered - capacity) / offered.
  search_spec spec;
  spec.loss_pct = {0, 5};
  const auto s = search_over({2.2e6, [=](double offered, double) { return std::min(offered, capacity); }}, spec);
  const auto& ndr = s.results().at(0);
  const auto& pdr = s.results().at(1);
  REQUIRE(ndr.rate_pps);
  REQUIRE(pdr.rate_pps);
  CHECK(*ndr.rate_pps == Approx(capacity).epsilon(0.01));
  CHECK(*pdr.rate_pps == Approx(capacity / 0.95).epsilon(0.01));
  CHECK(*pdr.rate_pps > *ndr.rate_pps);
}

TEST_CASE("search: when the senders' own maximum passes, the result says sender-limited", "[search]") {
  const auto s = search_over({500e3, [](double offered, double) { return offered; }});
  for (const auto& r : s.results()) {
    REQUIRE(r.rate_pps);
    CHECK(*r.rate_pps == Approx(500e3));
    CHECK_THAT(r.note, Catch::Contains("sender-limited"));
  }
  CHECK(s.trials().size() == 1);
}

TEST_CASE("search: a trial the senders could not send at its rate is never a pass", "[search]") {
  // The path carries everything, but the senders reach only 300 k when paced (and 310 k unpaced, with
  // a loss from the receiver at that instant only): no trial above 300 k may count as a pass.
  simulated p{310e3, [](double offered, double) { return offered > 305e3 ? offered * 0.9 : offered; }};
  const auto s = search_over(p);
  for (const auto& t : s.trials())
    if (t.sender_limited) CHECK(t.offered_pps > 0.99 * t.sent_pps);
  for (const auto& r : s.results()) {
    REQUIRE(r.rate_pps);
    CHECK(*r.rate_pps <= 310e3);
  }
}

TEST_CASE("search: a final trial that fails its target moves the search below it", "[search]") {
  // Short trials pass up to 500 k; long ones only up to 450 k (a buffer that fills in 10 s).
  simulated p{2.2e6, [](double offered, double duration) {
                const double cap = duration > 10 ? 450e3 : 500e3;
                return offered <= cap ? offered : cap * 0.9;
              }};
  const auto s = search_over(p);
  const auto& ndr = s.results().at(0);
  REQUIRE(ndr.rate_pps);
  CHECK(*ndr.rate_pps <= 450e3);
  REQUIRE(ndr.final);
  CHECK(ndr.final->loss_pct == 0);
  CHECK(count(s, harness::search_phase::final) > 2);
  CHECK(*ndr.rate_pps >= 0.98 * 450e3);
  // Below the failed final the search walks down from it, not halves: no trial far under the answer.
  bool after_failed_final = false;
  for (const auto& t : s.trials()) {
    if (after_failed_final && t.phase == harness::search_phase::search) CHECK(t.offered_pps >= 400e3);
    after_failed_final = after_failed_final || (t.phase == harness::search_phase::final && t.loss_pct > 0);
  }
}

TEST_CASE("search: nothing passes - no rate, a reason, and the search ends", "[search]") {
  const auto s = search_over({2.2e6, [](double offered, double) { return offered * 0.5; }});
  for (const auto& r : s.results()) {
    CHECK_FALSE(r.rate_pps);
    CHECK_FALSE(r.note.empty());
  }
}

TEST_CASE("search: the trial cap ends an unconverged search with the best confirmed rate", "[search]") {
  search_spec spec;
  spec.max_trials = 3;
  spec.precision_pct = 0.1;
  const auto s = search_over(livelock(700e3), spec);
  CHECK(count(s, harness::search_phase::search) <= 3);
  for (const auto& r : s.results()) {
    CHECK_FALSE(r.converged);
    if (r.rate_pps) CHECK(*r.rate_pps <= 700e3 / (1 - r.loss_target_pct / 100) + 1);
  }
}

TEST_CASE("search: an unpaced trial that failed ends the search with its reason", "[search]") {
  rate_search s({}, 1);
  auto n = s.next();
  REQUIRE(n);
  trial_outcome t;
  t.phase = harness::search_phase::mrr;
  t.failure = "01-a: no result";
  s.record(t);
  CHECK_FALSE(s.next());
  CHECK_THAT(s.results().at(0).note, Catch::Contains("no result"));
}

TEST_CASE("search: a trial that failed to run runs again, and twice in a row ends the search with its reason", "[search]") {
  rate_search s({}, 1);
  s.record(run(livelock(700e3), *s.next(), 1));
  auto first = s.next();
  REQUIRE(first);
  auto failed = [&](const harness::next_trial& n, int k) {
    trial_outcome t;
    t.run = "t" + std::to_string(k);
    t.phase = n.phase;
    t.offered_pps = n.offered_pps;
    t.duration = n.duration;
    t.failure = "02-i2: netload failed: cannot connect";
    return t;
  };
  s.record(failed(*first, 2));
  auto again = s.next();
  REQUIRE(again);  // the same trial once more
  CHECK(again->offered_pps == first->offered_pps);
  CHECK(again->phase == first->phase);
  s.record(failed(*again, 3));
  CHECK_FALSE(s.next());
  CHECK_FALSE(s.results().at(0).rate_pps);
  CHECK(s.results().at(0).note == "trial 3 (t3) failed to run, twice: 02-i2: netload failed: cannot connect");
}

TEST_CASE("search: a trial that failed to run once is not a failure at its rate", "[search]") {
  rate_search s({}, 1);
  int k = 0;
  bool failed_once = false;
  const auto p = livelock(700e3);
  while (auto n = s.next()) {
    ++k;
    REQUIRE(k < 200);
    if (!failed_once && n->phase == harness::search_phase::search && n->offered_pps > 600e3 && n->offered_pps < 700e3) {
      failed_once = true;
      trial_outcome t;
      t.run = "t" + std::to_string(k);
      t.phase = n->phase;
      t.offered_pps = n->offered_pps;
      t.duration = n->duration;
      t.failure = "i1: started 30 ms after T0";
      s.record(t);
      continue;
    }
    s.record(run(p, *n, k));
  }
  CHECK(failed_once);
  for (const auto& r : s.results()) {
    REQUIRE(r.rate_pps);
    CHECK(*r.rate_pps >= 0.99 * 700e3);
  }
}

TEST_CASE("search: a policer just above what the unpaced trial received - found in a handful of trials", "[search]") {
  // 20 k pps limit, everything above it dropped; the unpaced trial received just under 20 k.
  const auto s = search_over({1.5e6, [](double offered, double) { return std::min(offered, 19990.0); }});
  const auto& ndr = s.results().at(0);
  REQUIRE(ndr.rate_pps);
  CHECK(*ndr.rate_pps == Approx(19990).epsilon(0.01));
  CHECK(count(s, harness::search_phase::search) <= 6);
}

TEST_CASE("search: a looser target does not walk far above the stricter one's answer", "[search]") {
  // A policer at 20 k whose burst let the unpaced trial receive 20.3 k; the first trial there loses 0.4 %
  // (a pass for 0.5 %, a failure for 0 %). No trial may then go far above the limit.
  simulated p{700e3, [](double offered, double) {
                if (offered >= 700e3) return 20300.0;
                if (offered <= 20000) return offered;
                return offered <= 20400 ? offered * 0.996 : 20300.0;
              }};
  const auto s = search_over(p);
  for (const auto& t : s.trials())
    if (t.phase != harness::search_phase::mrr) CHECK(t.offered_pps < 25000);
  REQUIRE(s.results().at(1).rate_pps);
  CHECK(*s.results().at(1).rate_pps >= 20000);
}

TEST_CASE("search: sender-limited counts whole datagrams - 5 of 5.06 due is on rate, 1250 of 1290 is not", "[search]") {
  auto summary_of = [](std::uint64_t packets, double seconds) {
    harness::run_summary s;
    s.ok = true;
    nb::test_result r;
    r.sender.packets = packets;
    r.sender.seconds = seconds;
    r.sender.pps = static_cast<double>(packets) / seconds;
    for (int i = 0; i < 8; ++i) {
      harness::instance_record rec;
      rec.result = r;
      s.run.instances.push_back(rec);
    }
    return s;
  };
  CHECK_FALSE(harness::outcome_of(summary_of(5, 1.0), harness::search_phase::search, 40.45, std::nullopt, 1).sender_limited);
  CHECK_FALSE(harness::outcome_of(summary_of(1290, 1.0), harness::search_phase::search, 8 * 1290.0, std::nullopt, 1).sender_limited);
  CHECK(harness::outcome_of(summary_of(1250, 1.0), harness::search_phase::search, 8 * 1290.0, std::nullopt, 1).sender_limited);
}
