// The search record's one serializer: what netload and the harness both write as "search".
#include "core/search/search_record.hpp"

#include "core/json/json_fields.hpp"

#include <nlohmann/json.hpp>

namespace nb::search {

using nlohmann::json;

std::vector<goal_result> goal_results_of(const std::vector<goal>& goals, const mlr_search* s, bool interrupted,
                                         const std::string& stopped) {
  std::vector<goal_result> out;
  if (s) out = s->results();
  else
    for (const auto& g : goals) {
      goal_result r;
      r.g = g;
      r.irregularities.push_back(stopped.empty() ? "not searched" : stopped);
      out.push_back(std::move(r));
    }
  // A stop leaves bounds the search had not established yet: said so, never read as "none found".
  for (auto& r : out) r.interrupted = interrupted && !r.regular;
  return out;
}

json to_json(const goal& g) {
  json j = write_described(g);
  j["width_is"] = "relative: (upper - lower) / upper";
  return j;
}

json to_json(const goal_result& r) {
  json j = write_described(r);
  j["goal"] = to_json(r.g);
  j["interrupted"] = r.interrupted;
  return j;
}

json to_json(const search_record& r) {
  json goals = json::array(), results = json::array();
  for (const auto& g : r.goals) goals.push_back(to_json(g));
  for (const auto& g : r.goal_results) results.push_back(to_json(g));
  return {{"procedure", "MLRsearch (RFC 9971)"},
          {"goals", goals},
          {"mrr", r.mrr ? write_described(*r.mrr) : json(nullptr)},
          {"goal_results", results},
          {"trial_seconds", r.trial_seconds},
          {"interrupted", r.interrupted},
          {"stopped", r.stopped}};
}

json trials_json(const mlr_search& s) {
  json trials = json::array();
  for (std::size_t i = 0; i < s.trials().size(); ++i) {
    const auto& t = s.trials()[i];
    json j = {
        {"intended_load", t.intended_load}, {"duration", t.duration}, {"ran", t.ran}, {"load_limited", t.load_limited}};
    if (t.ran)
      j.update({{"sent", t.sent},
                {"received", t.received},
                {"loss_ratio", t.loss_ratio()},
                {"forwarding_rate", t.forwarding_rate()}});
    else j.update({{"sent", nullptr}, {"received", nullptr}, {"loss_ratio", nullptr}, {"forwarding_rate", nullptr}});
    j["reason"] = s.reasons()[i];
    trials.push_back(std::move(j));
  }
  return {{"min_load", s.min_load()}, {"max_load", s.max_load()}, {"start_load", s.start_load()}, {"trials", trials}};
}

}  // namespace nb::search
