#include "harness/run/search_trials.hpp"

#include "core/search/search_record.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness {

using nlohmann::json;

namespace {

// An instance that sent less than this share of its offered rate did not offer that rate.
constexpr double sender_tolerance = 0.99;

// Beside each load of a goal result (aggregate packets per second): per instance, and in payload bits.
void add_load_figures(json& result, const search_state& s) {
  for (const std::string name : {"relevant_lower_bound", "relevant_upper_bound", "conditional_throughput"}) {
    const json& pps = result.at(name);
    const auto figure = [&](auto f) { return pps.is_number() ? json(f(pps.get<double>())) : json(nullptr); };
    result[name + "_per_instance"] = figure([&](double x) { return x / static_cast<double>(s.instances); });
    result[name + "_bits_per_second"] = figure([&](double x) { return x * s.message_size * 8.0; });
  }
}

json latency_json(const latency_step& l, std::size_t instances) {
  json j = {{"name", l.name},
            {"fraction", l.fraction},
            {"intended_load", l.intended_load},
            {"intended_load_per_instance", l.intended_load / static_cast<double>(instances)},
            {"run", l.run},
            {"loss_ratio", l.loss_ratio},
            {"latency", l.latency}};
  if (!l.error.empty()) j["error"] = l.error;
  return j;
}

}  // namespace

std::string load_conversion(std::size_t instances) {
  return fmt::format("aggregate = per instance × {} instance{}", instances, instances == 1 ? "" : "s");
}

search_trial search_trial_of(const run_summary& s, std::string phase, double intended_load, double duration) {
  search_trial t;
  t.run = s.run.id;
  t.phase = std::move(phase);
  t.result.intended_load = intended_load;
  t.result.duration = duration;
  t.result.ran = s.ok && s.run.error.empty();
  // Cut short by a stop: the search learns nothing from it; the reports show what it counted. Also when the
  // stop came within the clocks' skew of the trial's end, so that the run is complete by the harness's
  // clock but a netload ended its test early.
  const bool instance_cut = std::any_of(s.run.instances.begin(), s.run.instances.end(),
                                        [](const instance_record& i) { return i.result && i.result->interrupted; });
  if (s.run.interrupted || instance_cut) {
    t.result.ran = false;
    t.interrupted = true;
    t.until_stop = s.measured;
    if (!t.until_stop && s.ok) t.until_stop = measured_part{s.sender, s.receiver, duration};
    return t;
  }
  if (!t.result.ran) {
    t.failure = !s.run.error.empty() ? s.run.error : s.failures.empty() ? "no instance ran" : s.failures.front();
    t.failure = t.failure.substr(0, t.failure.find('\n'));
    return t;
  }
  t.result.sent = s.sender.packets;
  t.result.received = s.receiver.packets;
  t.sent_pps = s.sender.pps;
  t.received_pps = s.receiver.pps;
  if (s.limit) t.limit = s.limit->limit;
  // The aggregate sent against what was due over each instance's sending time, capped at the trial's
  // duration (a late last wake-up is no shortfall); one datagram of slack per instance for whole datagrams.
  const double share = intended_load / static_cast<double>(s.run.instances.size());
  double sent = 0, due = 0;
  for (const auto& i : s.run.instances) {
    sent += static_cast<double>(i.result->sender.packets) + 1;
    due += share * std::min(i.result->sender.seconds, duration);
  }
  t.result.load_limited = intended_load > 0 && sent < sender_tolerance * due;
  return t;
}

json to_json(const search_trial& t, std::size_t instances, std::uint32_t m) {
  const bool unpaced = t.result.intended_load <= 0;
  json j = {{"run", t.run},
            {"phase", t.phase},
            {"reason", t.reason},
            {"unpaced", unpaced},
            {"intended_load", unpaced ? json(nullptr) : json(t.result.intended_load)},
            {"intended_load_per_instance",
             unpaced ? json(nullptr) : json(t.result.intended_load / static_cast<double>(instances))},
            {"trial_duration", t.result.duration},
            {"ran", t.result.ran}};
  if (!t.note.empty()) j["note"] = t.note;
  if (t.interrupted) {
    j["interrupted"] = true;
    const auto& u = t.until_stop;
    j["until_stop"] = u ? json{{"seconds", u->seconds},
                               {"offered_count", u->sender.packets},
                               {"forwarding_count", u->receiver.packets},
                               {"offered_rate", u->sender.pps},
                               {"forwarding_rate", u->receiver.pps}}
                        : json(nullptr);
    return j;
  }
  if (!t.result.ran) {
    j["failure"] = t.failure;
    return j;
  }
  const auto sent = static_cast<double>(t.result.sent);
  j.update({{"offered_count", t.result.sent},
            {"forwarding_count", t.result.received},
            {"offered_rate", t.sent_pps},
            {"forwarding_rate", t.received_pps},
            {"forwarding_rate_bits_per_second", t.received_pps * m * 8.0},
            {"loss_ratio", sent > 0 ? (sent - static_cast<double>(t.result.received)) / sent : 0.0},
            {"load_limited", t.result.load_limited},
            {"limit", t.limit}});
  return j;
}

std::pair<int, double> searched_trials(const search_state& s) {
  std::pair<int, double> n{0, 0.0};
  for (const auto& t : s.trials)
    if (t.phase != "latency" && !t.interrupted) {
      ++n.first;
      n.second += t.result.duration;
    }
  return n;
}

json to_json(const search_state& s) {
  nb::search::search_record record;
  record.goals = s.spec->goals;
  record.goal_results =
      nb::search::goal_results_of(s.spec->goals, s.search ? &*s.search : nullptr, s.interrupted, s.stopped);
  const bool mrr = !s.trials.empty() && s.trials.front().phase == "mrr";
  if (mrr && s.trials.front().result.ran)
    record.mrr = nb::search::unpaced_rates{s.trials.front().sent_pps, s.trials.front().received_pps};
  record.trial_seconds = searched_trials(s).second;
  record.interrupted = s.interrupted;
  record.stopped = s.stopped;
  json j = nb::search::to_json(record);
  json trials = json::array(), latency = json::array();
  for (auto& r : j.at("goal_results")) add_load_figures(r, s);
  for (const auto& t : s.trials) trials.push_back(to_json(t, s.instances, s.message_size));
  for (const auto& l : s.latency) latency.push_back(latency_json(l, s.instances));
  // The unpaced trial's whole record, its rates as the core's by the same names.
  if (mrr) j["mrr"] = trials.front();
  j.update({{"load_unit", "packets per second offered, aggregate over the instances, split equally"},
            {"instances", s.instances},
            {"load_conversion", load_conversion(s.instances)},
            {"message_size", s.message_size},
            {"max_trials", s.spec->max_trials},
            {"trials", trials},
            {"latency", latency}});
  return j;
}

bool trial_gate::run_again(search_trial& t) {
  untold_ = shortfall_.run_again(t.result);
  if (untold_) t.note = "the senders fell short once: run again before it counts as their limit";
  return untold_;
}

bool trial_gate::failed_twice(const search_trial& t) {
  if (untold_) return false;
  failed_in_a_row_ = t.result.ran ? 0 : failed_in_a_row_ + 1;
  return failed_in_a_row_ >= 2;
}

}  // namespace harness
