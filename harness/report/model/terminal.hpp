#pragma once
// What the console summary shows comes from a results folder's files (which may come from elsewhere) and
// from peers' messages: every name and message in it escaped for the terminal (nb::printable), field by
// field, so that none can move the cursor, ring, or end its line and forge the next.
#include "harness/report/model/aggregate.hpp"

#include <nlohmann/json.hpp>

namespace harness {

// A copy with its names (run, test, role, instances, hosts, categories) and messages (errors, problems,
// failures, late instances, target misses, the limit's words) escaped; figures unchanged.
run_summary for_terminal(run_summary s);
// A copy with every string value escaped (a search record's ids, roles and goal names); keys as they are.
nlohmann::json for_terminal(nlohmann::json j);

}  // namespace harness
