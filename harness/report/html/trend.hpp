#pragma once
// A measurement over the results folders that measured it, as plain figures: what `harness history
// --html` draws for every measurement in the store, and report.html for the run's own ones. The store
// (harness/store) fills these in; the report layer draws them and knows nothing of the store.
#include "harness/report/html/charts.hpp"
#include "harness/report/model/stats.hpp"

#include <optional>
#include <string>
#include <vector>

namespace harness {

struct trend_point {
  std::string folder;
  double started_utc = 0;
  spread received_pps, received_bps;  // over the folder's ok runs (the interval where it had repeats)
  bool current = false;               // the run a report.html is of
  bool regression = false;            // below its baseline (harness/store/trend/regress.hpp)
  bool change_begins = false;         // a level shift began at this point (the change-point method)
  double change_percent = 0;          // that shift's size, where change_begins
};

struct trend {
  std::string name;                 // for the page and its test: "history-<measurement>-<role>"
  std::string title;                // "pps-m64, fan-in, 64 B"
  std::vector<trend_point> points;  // oldest first; only points with figures
};

// report.html's history section: the run's measurements over the store's last runs, or why there is none.
struct run_history {
  bool recorded = false;
  std::string note;  // when not recorded, or every measurement has fewer than two points
  int last_n = 0;
  std::vector<trend> trends;
};

// Received pps (and, with `with_mbps`, Mbit/s in a second panel) per folder over time: error bars the
// 95 % interval where the folder had repeats, regressions in red, the current run ringed, a dashed line
// where a level shift began. nullopt for a trend without points.
std::optional<chart> trend_chart(const trend& t, bool with_mbps, const std::string& id);

}  // namespace harness
