#pragma once
// A measurement over the folders that measured it: filled by the store, drawn by the report, which knows
// nothing of the store.
#include "harness/report/html/charts.hpp"
#include "harness/report/model/stats.hpp"

#include <optional>
#include <string>
#include <vector>

namespace harness {

struct trend_point {
  std::string folder;
  double started_utc = 0;
  spread received_pps, received_bps;  // over the folder's ok runs
  bool current = false;               // the run a report.html is of
  bool regression = false;            // below its baseline (store/trend/regress.hpp)
  bool change_begins = false;         // a level shift began here
  double change_percent = 0;          // its size, where change_begins
};

struct trend {
  std::string name;                 // "history-<measurement>-<role>"
  std::string title;                // "pps-m64, fan-in, 64 B"
  std::vector<trend_point> points;  // oldest first; only points with figures
};

// report.html's history section.
struct run_history {
  bool recorded = false;
  std::string note;  // why not recorded, or too few points
  int last_n = 0;
  std::vector<trend> trends;
};

// Received pps (and Mbit/s `with_mbps`) per folder: regressions red, the current run ringed, a dashed
// line where a shift began. nullopt without points.
std::optional<chart> trend_chart(const trend& t, bool with_mbps, const std::string& id);

}  // namespace harness
