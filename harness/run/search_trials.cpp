#include "harness/run/search_trials.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness {

using nlohmann::json;

namespace {

// An instance that sent less than this share of its offered rate did not offer that rate.
constexpr double sender_tolerance = 0.99;

json or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// A load three ways: aggregate packets per second (the name itself), per instance, and payload bits.
void put_load(json& j, const std::string& name, const std::optional<double>& pps, std::size_t instances,
              std::uint32_t m) {
  j[name] = or_null(pps);
  j[name + "_per_instance"] = pps ? json(*pps / static_cast<double>(instances)) : json(nullptr);
  j[name + "_bits_per_second"] = pps ? json(*pps * m * 8.0) : json(nullptr);
}

json goal_result_json(const nb::search::goal_result& r, const search_state& s) {
  json j = {{"name", r.g.name}, {"goal", nb::search::to_json(r.g)}};
  put_load(j, "relevant_lower_bound", r.relevant_lower_bound, s.instances, s.message_size);
  put_load(j, "relevant_upper_bound", r.relevant_upper_bound, s.instances, s.message_size);
  put_load(j, "conditional_throughput", r.conditional_throughput, s.instances, s.message_size);
  j["regular"] = r.regular;
  j["irregularities"] = r.irregularities;
  j["trial_seconds"] = r.trial_seconds;
  // A stop leaves bounds the search had not established yet: said so, never read as "none found".
  j["interrupted"] = s.interrupted && !r.regular;
  return j;
}

// A goal the search never took up (its unpaced trial failed, or the search was stopped before it).
json unsearched_goal(const nb::search::goal& g, const search_state& s) {
  nb::search::goal_result r;
  r.g = g;
  r.irregularities.push_back(s.stopped.empty() ? "not searched" : s.stopped);
  return goal_result_json(r, s);
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
  // The load is the aggregate: what all instances sent against what was due over each one's sending
  // time (one instance a few datagrams behind while the others are on rate is no shortfall of the load),
  // never over more than the trial's duration: a sender's last late wake-up lengthens its measured time,
  // not what it was asked to send.
  // Whole datagrams: at 5 pps for 1 s an instance sends 5, which is not 1 % short of 5.06: one datagram
  // of slack per instance, then the tolerance.
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
  json goals = json::array(), trials = json::array(), results = json::array(), latency = json::array();
  for (const auto& g : s.spec->goals) goals.push_back(nb::search::to_json(g));
  for (const auto& t : s.trials) trials.push_back(to_json(t, s.instances, s.message_size));
  const double seconds = searched_trials(s).second;
  if (s.search)
    for (const auto& r : s.search->results()) results.push_back(goal_result_json(r, s));
  else
    for (const auto& g : s.spec->goals) results.push_back(unsearched_goal(g, s));
  for (const auto& l : s.latency) latency.push_back(latency_json(l, s.instances));
  const bool mrr = !s.trials.empty() && s.trials.front().phase == "mrr";
  return {{"procedure", "MLRsearch (RFC 9971)"},
          {"load_unit", "packets per second offered, aggregate over the instances, split equally"},
          {"instances", s.instances},
          {"load_conversion", load_conversion(s.instances)},
          {"message_size", s.message_size},
          {"max_trials", s.spec->max_trials},
          {"goals", goals},
          {"mrr", mrr ? to_json(s.trials.front(), s.instances, s.message_size) : json(nullptr)},
          {"goal_results", results},
          {"trials", trials},
          {"trial_seconds", seconds},
          {"stopped", s.stopped},
          {"interrupted", s.interrupted},
          {"latency", latency}};
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
