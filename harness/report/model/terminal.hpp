#pragma once
// Results folders and peers' messages are untrusted: every name and message escaped for the terminal.
#include "harness/report/model/aggregate.hpp"

#include <nlohmann/json.hpp>

namespace harness {

// Names and messages escaped; figures unchanged.
run_summary for_terminal(run_summary s);
// Every string value escaped; keys as they are.
nlohmann::json for_terminal(nlohmann::json j);

}  // namespace harness
