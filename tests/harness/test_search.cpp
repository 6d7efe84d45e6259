// The harness's side of the rate search (harness/run/search_trials.hpp): a run read back as a trial
// (load-limited by whole datagrams, a run that failed to run), and the record in RFC 9971's terms with
// every load aggregate and per instance, from MLRsearch run over a simulated circuit. The search logic
// itself is tested in tests/unit against simulated systems.
#include "harness/run/search_trials.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

namespace {

using nlohmann::json;

harness::run_summary summary_of(std::uint64_t packets, double seconds, std::size_t instances = 8) {
  harness::run_summary s;
  s.ok = true;
  s.run.id = "r";
  nb::test_result r;
  r.sender.packets = packets;
  r.sender.seconds = seconds;
  r.sender.pps = static_cast<double>(packets) / seconds;
  for (std::size_t i = 0; i < instances; ++i) {
    harness::instance_record rec;
    rec.result = r;
    s.run.instances.push_back(rec);
  }
  s.sender.packets = packets * instances;
  s.receiver.packets = packets * instances;
  return s;
}

// A circuit that forwards up to `limit` packets per second in all and drops the rest, behind senders
// that offer up to `senders` in all: the trial as the harness would read it back from its run.
nb::search::trial_result policed(double limit, double senders, const nb::search::trial_request& n) {
  nb::search::trial_result t;
  t.intended_load = n.intended_load;
  t.duration = n.duration;
  const double sent = std::min(n.intended_load, senders);
  t.sent = static_cast<std::uint64_t>(sent * n.duration);
  t.received = static_cast<std::uint64_t>(std::min(sent, limit) * n.duration);
  t.load_limited = sent < 0.99 * n.intended_load;
  return t;
}

}  // namespace

TEST_CASE("search trial: load-limited counts whole datagrams - 5 of 5.06 due is on rate, 1250 of 1290 is not",
          "[search]") {
  CHECK_FALSE(harness::search_trial_of(summary_of(5, 1.0), "search", 40.45, 1).result.load_limited);
  CHECK_FALSE(harness::search_trial_of(summary_of(1290, 1.0), "search", 8 * 1290.0, 1).result.load_limited);
  const auto short_of = harness::search_trial_of(summary_of(1250, 1.0), "search", 8 * 1290.0, 1);
  CHECK(short_of.result.load_limited);
  CHECK(short_of.result.ran);
  CHECK(short_of.result.sent == 8 * 1250);
  CHECK_FALSE(
      harness::search_trial_of(summary_of(1250, 1.0), "mrr", 0, 1).result.load_limited);  // unpaced: nothing due
  // Every instance sent its 2500 of 1 s, and its last wake-up came 11.5 ms late: on rate.
  CHECK_FALSE(harness::search_trial_of(summary_of(2500, 1.0115), "search", 20000, 1).result.load_limited);
}

TEST_CASE("search trial: a run that did not run as asked is a trial that failed to run, with why", "[search]") {
  auto failed = summary_of(1000, 1.0);
  failed.ok = false;
  failed.failures = {"02-b: netload failed: cannot connect\nmore"};
  const auto t = harness::search_trial_of(failed, "search", 16000, 1);
  CHECK_FALSE(t.result.ran);
  CHECK(t.failure == "02-b: netload failed: cannot connect");
  auto never = summary_of(0, 1.0);
  never.run.error = "netserve on dev did not start";
  CHECK(harness::search_trial_of(never, "search", 16000, 1).failure == "netserve on dev did not start");
  const json j = harness::to_json(t, 8, 64);
  CHECK(j.at("ran") == false);
  CHECK_FALSE(j.contains("loss_ratio"));  // no loss ratio for a trial that did not run
}

TEST_CASE(
    "search record: a circuit policed at 20 k pps over 8 instances, in the RFC's terms, aggregate and per instance",
    "[search]") {
  const harness::search_spec spec;  // CSIT's NDR and PDR
  harness::search_state st{&spec, 8, 64, {}, std::nullopt, {}, "", false};
  harness::search_trial mrr;
  mrr.run = "s-s01-mrr";
  mrr.phase = "mrr";
  mrr.result = {0, 1, 640000, 20000, true, false};
  mrr.sent_pps = 640000;
  mrr.received_pps = 20000;
  st.trials.push_back(mrr);
  st.search.emplace(spec.goals, 8, 640000, 20000);
  int k = 0;
  while (auto n = st.search->next()) {
    REQUIRE(++k < 500);  // it always ends
    harness::search_trial t;
    t.phase = "search";
    t.result = policed(20000, 640000, *n);
    st.trials.push_back(t);
    st.search->record(t.result);
  }
  const json j = harness::to_json(st);
  CHECK(j.at("procedure") == "MLRsearch (RFC 9971)");
  CHECK(j.at("load_conversion") == "aggregate = per instance × 8 instances");
  CHECK(j.at("goals").size() == 2);
  CHECK(j.at("goals")[1].at("duration_sum") == 21.0);
  CHECK(j.at("mrr").at("offered_rate") == 640000.0);
  CHECK(j.at("trials").size() == static_cast<std::size_t>(k + 1));
  CHECK(j.at("trial_seconds").get<double>() == Approx(st.search->trial_seconds() + 1));
  REQUIRE(j.at("goal_results").size() == 2);
  for (const json& r : j.at("goal_results")) {
    INFO(r.dump());
    REQUIRE(r.at("relevant_lower_bound").is_number());
    REQUIRE(r.at("relevant_upper_bound").is_number());
    const double lower = r.at("relevant_lower_bound").get<double>(), upper = r.at("relevant_upper_bound").get<double>();
    // The highest load within the goal's loss ratio: 20 k / (1 - loss ratio); NDR's is the limit itself.
    const double truth = 20000 / (1 - r.at("goal").at("loss_ratio").get<double>());
    CHECK(lower <= truth * 1.0001);
    CHECK(lower >= truth * 0.97);
    CHECK(upper > lower);
    CHECK((upper - lower) / upper <= r.at("goal").at("width").get<double>() + 1e-9);
    CHECK(r.at("relevant_lower_bound_per_instance").get<double>() == Approx(lower / 8));
    CHECK(r.at("relevant_lower_bound_bits_per_second").get<double>() == Approx(lower * 64 * 8));
    CHECK(r.at("conditional_throughput").is_number());
    CHECK(r.at("regular") == true);
    CHECK(r.at("irregularities").empty());
  }
}

TEST_CASE("search record: an unpaced trial that failed leaves every goal unsearched, with why", "[search]") {
  const harness::search_spec spec;
  harness::search_state st{&spec, 2, 64, {}, std::nullopt, {}, "the unpaced trial (MRR) failed: 01-a: cannot connect",
                           false};
  harness::search_trial mrr;
  mrr.phase = "mrr";
  mrr.result.ran = false;
  mrr.failure = "01-a: cannot connect";
  st.trials.push_back(mrr);
  const json j = harness::to_json(st);
  REQUIRE(j.at("goal_results").size() == 2);
  for (const json& r : j.at("goal_results")) {
    CHECK(r.at("relevant_lower_bound").is_null());
    CHECK(r.at("regular") == false);
    CHECK(r.at("irregularities") == json::array({"the unpaced trial (MRR) failed: 01-a: cannot connect"}));
  }
  CHECK(j.at("stopped") == "the unpaced trial (MRR) failed: 01-a: cannot connect");
}

namespace {

harness::search_trial gate_trial(double load, bool ran, bool load_limited) {
  harness::search_trial t;
  t.result.intended_load = load;
  t.result.duration = 1;
  t.result.ran = ran;
  t.result.load_limited = load_limited;
  return t;
}

}  // namespace

TEST_CASE("trial gate: a first shortfall runs again untold, its note says so (core's shortfall rule)", "[search]") {
  harness::trial_gate gate;
  auto short1 = gate_trial(1000, true, true);
  CHECK(gate.run_again(short1));
  CHECK_FALSE(short1.note.empty());
  auto short2 = gate_trial(1000, true, true);
  CHECK_FALSE(gate.run_again(short2));  // told: the search lowers its max load
  CHECK(short2.note.empty());
}

TEST_CASE("trial gate: two failures told in a row stop the search, a shortfall run again untold is no failure",
          "[search]") {
  harness::trial_gate gate;
  auto shortfall = gate_trial(1000, true, true);
  REQUIRE(gate.run_again(shortfall));
  CHECK_FALSE(gate.failed_twice(shortfall));
  auto failure = gate_trial(1000, false, false);  // the repeat failed to run: one failure, not two
  CHECK_FALSE(gate.run_again(failure));
  CHECK_FALSE(gate.failed_twice(failure));
  auto untold = gate_trial(1000, true, true);  // between two failures, a shortfall run again untold
  REQUIRE(gate.run_again(untold));
  CHECK_FALSE(gate.failed_twice(untold));
  auto again = gate_trial(1000, false, false);  // the search was told two failures in a row
  CHECK_FALSE(gate.run_again(again));
  CHECK(gate.failed_twice(again));
  auto ok = gate_trial(1000, true, false);
  gate.run_again(ok);
  CHECK_FALSE(gate.failed_twice(ok));
}

TEST_CASE("search trial: a netload that ended its test at a stop makes the trial interrupted, never told", "[search]") {
  // The run is complete by the harness's clock (the stop came within the skew of its end); one netload
  // saw the signal before its own end.
  auto s = summary_of(1000, 1.0, 2);
  s.run.instances[1].result->interrupted = nb::interruption{"SIGINT", 0.99, 1.0};
  const auto t = harness::search_trial_of(s, "search", 2000, 1);
  CHECK(t.interrupted);
  CHECK_FALSE(t.result.ran);
  REQUIRE(t.until_stop);
  CHECK(t.until_stop->sender.packets == 2000);
  const auto j = harness::to_json(t, 2, 64);
  CHECK(j.at("interrupted").get<bool>());
  CHECK(j.at("until_stop").at("offered_count").get<std::uint64_t>() == 2000);
}
