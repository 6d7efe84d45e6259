// A search run: trial after trial, each an ordinary run of all the instances with its own raw/ folder.
// One unpaced trial first (MRR): its sent rate is the maximal load, its received rate the starting guess;
// then the loads MLRsearch (core/search/mlr_search.hpp) asks for, split equally over the instances; then,
// when the test has a latency probe, the probe under load at fractions of the PDR. raw/<run>/search.json
// holds the record after every trial, so an interrupted search still shows how far it got.
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "harness/report/model/latency.hpp"
#include "harness/report/results.hpp"
#include "harness/run/runner.hpp"
#include "harness/run/search_trials.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json search_record(const run_spec& r, int order, const search_state& s) {
  json j = measurement_json(r);
  j.update({{"id", r.id},
            {"instances", s.instances},
            {"order", order},
            {"interrupted", s.interrupted},
            {"search", to_json(s)}});
  return j;
}

std::string load_words(double aggregate, std::size_t n) {
  return fmt::format("{} pps ({} pps per instance)", nb::format_si(aggregate),
                     nb::format_si(aggregate / static_cast<double>(n)));
}

std::string describe(const search_trial& t, std::size_t n) {
  const std::string load = t.result.intended_load > 0 ? load_words(t.result.intended_load, n) : "unpaced";
  if (t.interrupted && t.until_stop)
    return fmt::format("{}: INTERRUPTED after {:.1f} s: until the stop sent {} pps, received {} pps (told to nobody)",
                       load, t.until_stop->seconds, nb::format_si(t.until_stop->sender.pps),
                       nb::format_si(t.until_stop->receiver.pps));
  if (t.interrupted) return fmt::format("{}: INTERRUPTED before anything was counted", load);
  if (!t.result.ran) return fmt::format("{} for {:g} s: FAILED TO RUN: {}", load, t.result.duration, t.failure);
  return fmt::format(
      "{} for {:g} s: sent {} pps, received {} pps, loss ratio {:.6f}{}{}", load, t.result.duration,
      nb::format_si(t.sent_pps), nb::format_si(t.received_pps), t.result.loss_ratio(),
      t.result.load_limited && t.note.empty() ? " - load-limited (the senders fell short): does not count" : "",
      t.limit.empty() ? "" : fmt::format(" [limit: {}]", t.limit));
}

// The trial's line on the console, as it is recorded.
const search_trial& show(const std::string& id, int k, const search_trial& t, std::size_t instances) {
  // A failure's words are netload's (or its peer's): escaped, as every message of a program is.
  fmt::print(stderr, "harness: search {} trial {} ({}): {}{}\n", nb::printable(id), k, t.reason,
             nb::printable_bounded(describe(t, instances), 1000), t.note.empty() ? "" : " - " + nb::printable(t.note));
  return t;
}

std::string bound_words(const std::optional<double>& pps, std::size_t n) { return pps ? load_words(*pps, n) : "none"; }

void print_results(const run_spec& r, const search_state& s) {
  if (!s.search) {
    fmt::print(stderr, "harness: search {}: no goal searched: {}\n", r.id, s.stopped);
    return;
  }
  const auto [trials, seconds] = searched_trials(s);
  fmt::print(stderr, "harness: search {}: loads are {}; {:g} trial-seconds in {} trials (the MRR's included)\n", r.id,
             load_conversion(s.instances), seconds, trials);
  for (const auto& g : s.search->results())
    fmt::print(
        stderr,
        "harness: search {}: {} (loss ratio {:g}): relevant lower bound {}, relevant upper bound {}, conditional "
        "throughput {}: {}{}\n",
        r.id, g.g.name, g.g.loss_ratio, bound_words(g.relevant_lower_bound, s.instances),
        bound_words(g.relevant_upper_bound, s.instances), bound_words(g.conditional_throughput, s.instances),
        g.regular       ? "regular"
        : s.interrupted ? "not established: the search was interrupted"
                        : "irregular",
        g.irregularities.empty() ? "" : " (" + fmt::format("{}", fmt::join(g.irregularities, "; ")) + ")");
}

// The goal whose conditional throughput the latency steps take their fractions of: the one named PDR, or
// else the most lenient.
const nb::search::goal_result* pdr_of(const std::vector<nb::search::goal_result>& results) {
  const nb::search::goal_result* best = nullptr;
  for (const auto& g : results)
    if (g.g.name == "PDR") return &g;
    else if (!best || g.g.loss_ratio > best->g.loss_ratio) best = &g;
  return best;
}

// From the unpaced trial: the max load is what it sent (one packet per second per instance the least a
// trial offers), the starting guess what it received. False when it failed: nothing to search from.
bool start_search(search_state& st, const search_trial& mrr) {
  if (!mrr.result.ran || mrr.sent_pps <= 0) {
    st.stopped = "the unpaced trial (MRR) failed: " + (mrr.result.ran ? std::string("it sent nothing") : mrr.failure);
    return false;
  }
  const double min_load = static_cast<double>(st.instances);
  const double max_load = std::max(mrr.sent_pps, min_load);
  st.search.emplace(st.spec->goals, min_load, max_load, std::clamp(mrr.received_pps, min_load, max_load));
  // Told trials, the MRR not among them: at the limit every open goal names it.
  st.search->set_trial_limit(static_cast<std::size_t>(std::max(1, st.spec->max_trials - 1)));
  return true;
}

}  // namespace

// One trial: an ordinary run under its own id; nothing when a stop came during it (an interrupted trial
// teaches the search nothing).
asio::awaitable<std::optional<run_summary>> runner::run_search_trial(const run_spec& trial) {
  co_await run_one(trial);
  const fs::path dir = dir_ / "raw" / trial.id;
  if (cancelled_ && !fs::exists(dir / "run.json")) co_return std::nullopt;  // stopped before it began
  co_return summarize(load_run(dir));
}

asio::awaitable<void> runner::run_search(const run_spec& r) {
  const search_spec& spec = *r.spec->search;
  search_state st{&spec, r.instances.size() - (r.probe() ? 1 : 0), r.message_size, {}, std::nullopt, {}, "", false};
  const fs::path dir = dir_ / "raw" / r.id;
  fs::create_directories(dir);
  const int order = order_;
  int k = 0, last_told_failure = 0;
  trial_gate gate;
  auto write = [&] { write_json(dir / "search.json", search_record(r, order, st)); };
  // The unpaced trial, as long as the goals' longest first trials.
  double mrr_duration = 0;
  for (const auto& g : spec.goals) mrr_duration = std::max(mrr_duration, g.initial_trial_duration);
  std::optional<nb::search::trial_request> next =
      nb::search::trial_request{0, mrr_duration, "maximal load and starting guess (MRR, unpaced)"};
  while (next) {
    if (k > 0) co_await settle_pause();
    if (cancelled_) break;       // no trial starts after a stop
    if (k >= spec.max_trials) {  // every trial counts here, those run again untold too
      st.stopped = fmt::format("max_trials {} reached", spec.max_trials);
      break;
    }
    const bool mrr = k == 0;
    const std::string id = fmt::format("{}-s{:02}-{}", r.id, ++k, mrr ? "mrr" : "search");
    const json tag = {{"of", r.id}, {"phase", mrr ? "mrr" : "search"}, {"intended_load", next->intended_load}};
    const run_spec trial =
        trial_of(r, id, next->intended_load, next->duration, tag);  // named: GCC 12 and temporaries across co_await
    auto measured = co_await run_search_trial(trial);
    if (!measured) break;
    search_trial t = search_trial_of(*measured, mrr ? "mrr" : "search", next->intended_load, next->duration);
    t.reason = next->reason;
    if (t.interrupted) {  // cut short by a stop: kept and shown, never told to the search
      st.trials.push_back(show(r.id, k, t, st.instances));
      break;
    }
    const bool again = !mrr && gate.run_again(t);
    st.trials.push_back(show(r.id, k, t, st.instances));
    if (mrr && !start_search(st, t)) break;
    if (!mrr && !again) st.search->record(t.result);
    write();
    if (gate.failed_twice(t)) {
      st.stopped = fmt::format("trials {} and {} failed to run: {}", last_told_failure, k, t.failure);
      break;
    }
    if (!t.result.ran && !again) last_told_failure = k;
    if (!again) next = st.search->next();  // else the same request once more
  }
  st.interrupted = cancelled_;
  if (st.interrupted && st.stopped.empty()) st.stopped = "interrupted by a stop";
  if (!cancelled_ && st.search && r.probe()) {
    co_await run_latency_steps(r, st, k, write);
    if (cancelled_) {  // the goals' bounds stand; the latency steps were cut short, and the record says so
      st.interrupted = true;
      st.stopped = "interrupted by a stop during the latency steps";
    }
  }
  write();
  print_results(r, st);
  write_reports(dir_);
}

// The latency probe under load at the minimal load and at 10, 50 and 90 % of the PDR's conditional
// throughput (as FD.io CSIT publishes latency), each step as long as the test.
asio::awaitable<void> runner::run_latency_steps(const run_spec& r, search_state& st, int& k,
                                                std::function<void()> write) {
  const auto results = st.search->results();
  const auto* pdr = pdr_of(results);
  if (!pdr || !pdr->conditional_throughput) {
    fmt::print(stderr, "harness: search {}: no latency steps: no conditional throughput to take fractions of\n", r.id);
    co_return;
  }
  const double minimal = static_cast<double>(st.instances);
  for (const double fraction : {0.0, 0.1, 0.5, 0.9}) {
    co_await settle_pause();
    if (cancelled_) co_return;
    latency_step step;
    step.fraction = fraction;
    step.name = fraction == 0 ? "minimal load" : fmt::format("{:g} % of {}", fraction * 100, pdr->g.name);
    step.intended_load = fraction == 0 ? minimal : std::max(minimal, fraction * *pdr->conditional_throughput);
    step.run = fmt::format("{}-s{:02}-latency", r.id, ++k);
    const json tag = {{"of", r.id}, {"phase", "latency"}, {"intended_load", step.intended_load}, {"step", step.name}};
    const run_spec trial = trial_of(r, step.run, step.intended_load, r.duration, tag, true);
    auto measured = co_await run_search_trial(trial);
    if (!measured) co_return;
    search_trial t = search_trial_of(*measured, "latency", step.intended_load, r.duration);
    t.reason = step.name;
    fmt::print(stderr, "harness: search {} latency step ({}): {}\n", r.id, step.name, describe(t, st.instances));
    st.trials.push_back(t);
    if (t.interrupted) co_return;  // kept in the trials; the step has no figures to stand for
    step.loss_ratio = t.result.ran ? t.result.loss_ratio() : 0;
    if (!measured->probe) step.error = "no probe result";
    else if (!measured->probe->error.empty()) step.error = measured->probe->error;
    else if (!t.result.ran) step.error = t.failure;
    else step.latency = measured->probe->loaded.summary_json();
    st.latency.push_back(std::move(step));
    write();
  }
}

}  // namespace harness
