#include "harness/report/search_view.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace harness {

using nlohmann::json;

bool is_goal_search(const json& search) { return search.is_object() && search.contains("goal_results"); }

double number_or(const json& j, const char* key, double fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string goal_words(const json& goal) {
  return fmt::format("{} (loss ratio {:g})", goal.value("name", ""), number_or(goal, "loss_ratio"));
}

std::string load_cell(const json& result, const std::string& key) {
  const auto it = result.find(key);
  if (it == result.end() || !it->is_number()) return "none";
  return fmt::format("{} ({} each)", fmt_pps(it->get<double>()),
                     fmt_pps(number_or(result, (key + "_per_instance").c_str())));
}

std::string mbps_cell(const json& result, const char* key) {
  const auto it = result.find(key);
  return it != result.end() && it->is_number() ? fmt_mbps(it->get<double>()) : "";
}

std::string regularity(const json& result) {
  if (result.value("regular", false)) return "regular";
  if (result.value("interrupted", false)) return "not established (interrupted)";
  const auto why = result.value("irregularities", std::vector<std::string>{});
  return why.empty() ? "irregular" : fmt::format("irregular: {}", fmt::join(why, "; "));
}

std::string stopped_words(const json& search) {
  const std::string why = search.value("stopped", "");
  return why.empty() ? "" : ", stopped: " + why;
}

text_table goals_table(const json& search) {
  text_table t({"goal", "loss_ratio", "exceed_ratio", "final_trial_duration s", "duration_sum s", "width",
                "initial_trial_duration s", "trial-seconds while open"});
  for (const json& r : search.at("goal_results")) {
    const json& g = r.at("goal");
    t.add({g.value("name", ""), fmt::format("{:g}", number_or(g, "loss_ratio")),
           fmt::format("{:g}", number_or(g, "exceed_ratio")), fmt::format("{:g}", number_or(g, "final_trial_duration")),
           fmt::format("{:g}", number_or(g, "duration_sum")), fmt::format("{:g}", number_or(g, "width")),
           fmt::format("{:g}", number_or(g, "initial_trial_duration")),
           fmt::format("{:g}", number_or(r, "trial_seconds"))});
  }
  return t;
}

}  // namespace harness
