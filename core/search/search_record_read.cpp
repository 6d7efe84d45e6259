// The search record's one reader: this version's "search" block, and the shapes earlier versions wrote
// (results folders keep them), each read into the same search_record.
#include "core/json/json_fields.hpp"
#include "core/search/search_record.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace nb::search {

namespace {

using nlohmann::json;
using fields = json_fields<std::runtime_error>;

std::vector<goal> read_goals(fields& f) {
  std::vector<goal> out;
  for (const json& g : f.get<std::vector<json>>("goals"))
    out.push_back(read_goal(g, fmt::format("{} goals[{}]", f.context(), out.size())));
  return out;
}

// A goal result's figures by this version's names; its goal is the caller's to read.
goal_result read_figures(fields& f) {
  goal_result r;
  f.read_described(r);
  r.interrupted = f.get_or("interrupted", false);  // netload wrote it only when true
  return r;
}

// The unpaced trial's rates. The harness writes its whole trial record there, which has no rates when the
// trial failed or was stopped.
std::optional<unpaced_rates> read_mrr(const json& mrr, const std::string& context) {
  if (!mrr.is_object() || !mrr.contains("forwarding_rate")) return std::nullopt;
  fields f(mrr, context);
  return f.read_described<unpaced_rates>();
}

// Each result under `key`: its figures by this version's names, its goal as `goal_of` reads it from there.
template <class GoalOf>
std::vector<goal_result> read_results(fields& f, const char* key, GoalOf goal_of) {
  std::vector<goal_result> out;
  for (const json& r : f.get<std::vector<json>>(key)) {
    fields rf(r, fmt::format("search {}[{}]", key, out.size()));
    goal_result g = read_figures(rf);
    g.g = goal_of(rf);
    out.push_back(std::move(g));
  }
  return out;
}

search_record read_current(const json& search) {
  fields f(search, "search");
  search_record out;
  out.goals = read_goals(f);
  out.goal_results = read_results(f, "goal_results",
                                  [](fields& rf) { return read_goal(rf.get<json>("goal"), rf.context() + " goal"); });
  out.mrr = read_mrr(f.get<json>("mrr"), "search mrr");
  out.trial_seconds = f.get<double>("trial_seconds");
  out.interrupted = f.get<bool>("interrupted");
  out.stopped = f.get<std::string>("stopped");
  return out;
}

// netload's before this version: each result's goal by its name, the goals apart; no unpaced trial.
search_record read_netload_results(const json& search) {
  fields f(search, "search");
  search_record out;
  out.goals = read_goals(f);
  out.goal_results = read_results(f, "results", [&](fields& rf) {
    const auto name = rf.get<std::string>("goal");
    const auto it = std::find_if(out.goals.begin(), out.goals.end(), [&](const goal& x) { return x.name == name; });
    if (it == out.goals.end()) rf.fail("goal", "names none of the goals");
    return *it;
  });
  out.trial_seconds = f.get<double>("trial_seconds");
  return out;
}

// The harness's before MLRsearch: loss targets in percent, each with the rate it found. Its settings as
// goals, as the plans' older form maps them (harness/plan/plan_search.cpp).
goal older_goal(double loss_pct, const json& settings) {
  const json s = settings.is_object() ? settings : json::object();
  fields f(s, "search settings");
  const double trial = f.get_or("trial", 2.0), final_s = f.get_or("final", 30.0);
  goal g;
  g.name = loss_pct == 0 ? "NDR" : loss_pct == 0.5 ? "PDR" : fmt::format("loss {:g} %", loss_pct);
  g.loss_ratio = loss_pct / 100;
  g.exceed_ratio = 0;
  g.final_trial_duration = final_s;
  g.duration_sum = final_s;
  g.width = f.get_or("precision_pct", 1.0) / 100;
  g.initial_trial_duration = std::min(trial, final_s);
  return g;
}

search_record read_loss_targets(const json& search) {
  fields f(search, "search");
  search_record out;
  const json settings = f.get_or("settings", json());
  for (const json& r : f.get<std::vector<json>>("results")) {
    fields rf(r, fmt::format("search results[{}]", out.goal_results.size()));
    goal_result g;
    g.g = older_goal(rf.get<double>("loss_target_pct"), settings);
    g.relevant_lower_bound = rf.get_or<std::optional<double>>("rate_pps", std::nullopt);
    g.regular = rf.get_or("converged", false);
    if (auto note = rf.get_or<std::string>("note", ""); !note.empty()) g.irregularities.push_back(std::move(note));
    g.interrupted = rf.get_or("interrupted", false);
    out.goals.push_back(g.g);
    out.goal_results.push_back(std::move(g));
  }
  if (const json mrr = f.get_or("mrr", json()); mrr.is_object() && mrr.contains("received_pps")) {
    fields mf(mrr, "search mrr");
    out.mrr = unpaced_rates{mf.get<double>("sent_pps"), mf.get<double>("received_pps")};
  }
  for (const json& t : f.get_or("trials", std::vector<json>{}))
    if (t.is_object() && t.contains("duration")) out.trial_seconds += fields(t, "search trial").get<double>("duration");
  return out;
}

}  // namespace

goal read_goal(const json& j, const std::string& context) {
  fields f(j, context);
  goal g = f.read_described<goal>();
  f.known({"width_is"});
  f.done();
  return g;
}

search_record read_search_record(const json& search) {
  if (search.is_object() && search.contains("results") && !search.contains("goal_results"))
    return search.contains("goals") ? read_netload_results(search) : read_loss_targets(search);
  return read_current(search);
}

}  // namespace nb::search
