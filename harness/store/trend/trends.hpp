#pragma once
// The store's series as report trends: `harness history --html`, report.html's "over the last N runs".
#include "harness/report/html/trend.hpp"
#include "harness/store/database.hpp"
#include "harness/store/history.hpp"
#include "harness/store/trend/regress.hpp"

#include <string>
#include <vector>

namespace harness::store {

// Folders in report.html's history chart, the run's own the last.
inline constexpr int report_history_runs = 20;

// The points with figures up to `current` (empty: all), the last `last_n` (0: all), judged and marked.
trend trend_of(const series& s, const std::string& marked, const regression_options& o, const std::string& current = "",
               int last_n = 0);

// One chart per measurement, grouped by plan.
std::string history_page(database& db, const std::vector<series>& all, const history_filter& f,
                         const regression_options& o);

// plan_history: the series if already read.
run_history history_of_run(database& db, const std::string& folder, const regression_options& o,
                           const std::vector<series>* plan_history = nullptr);

}  // namespace harness::store
