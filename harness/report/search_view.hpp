#pragma once
// Reading a search's record (harness/run/search_trials.hpp's JSON) for the reports: the cells and words
// report.md, the console and report.html share, so they never say different things.
#include "harness/report/report.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace harness {

// A search recorded in RFC 9971's terms (goal_results); a folder from an older harness has none.
bool is_goal_search(const nlohmann::json& search);
// j[key] as a number; `fallback` when absent or null.
double number_or(const nlohmann::json& j, const char* key, double fallback = 0);
// "PDR (loss ratio 0.005)".
std::string goal_words(const nlohmann::json& goal);
// A load of a goal result: "20.0 k (2.50 k each)", or "none".
std::string load_cell(const nlohmann::json& result, const std::string& key);
std::string mbps_cell(const nlohmann::json& result, const char* key);
// "regular", "irregular: why; why", or "not established (interrupted)".
std::string regularity(const nlohmann::json& result);
// ", stopped: why" when the search ended before its goals; "" otherwise.
std::string stopped_words(const nlohmann::json& search);
// Every goal's parameters by the RFC's names, and the trial-seconds spent while it was open.
text_table goals_table(const nlohmann::json& search);

}  // namespace harness
