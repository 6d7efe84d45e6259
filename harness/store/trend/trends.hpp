#pragma once
// The store's series as the report layer's plain trends (harness/report/html/trend.hpp): `harness history
// --html`'s page, and report.html's "over the last N runs" section for a run just recorded.
#include "harness/report/html/trend.hpp"
#include "harness/store/database.hpp"
#include "harness/store/history.hpp"
#include "harness/store/trend/regress.hpp"

#include <string>
#include <vector>

namespace harness::store {

// How many folders of a measurement report.html's history chart shows, the run's own the last.
inline constexpr int report_history_runs = 20;

// A series' points with figures (up to and including the folder at path `current` and at most `last_n`
// of them when `current` is given), each judged against its own baseline and marked where a level shift began.
trend trend_of(const series& s, const std::string& marked, const regression_options& o, const std::string& current = "",
               int last_n = 0);

// The page `harness history --html` writes: one chart per measurement, grouped by plan.
std::string history_page(database& db, const std::vector<series>& all, const history_filter& f,
                         const regression_options& o);

// report.html's section for the folder just recorded: its plan's measurements over the last N folders.
// `plan_history`: the plan's series when already read (judge_folder), else they are read here.
run_history history_of_run(database& db, const std::string& folder, const regression_options& o,
                           const std::vector<series>* plan_history = nullptr);

}  // namespace harness::store
