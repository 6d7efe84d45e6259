#pragma once
// A measurement over time: per plan and measurement, one point per results folder.
#include "harness/report/model/stats.hpp"
#include "harness/store/changepoint.hpp"
#include "harness/store/database.hpp"

#include <boost/describe/class.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace harness::store {

struct stored_run {
  std::string run;
  bool ok = false, interrupted = false;
  std::string error;  // the run's, else its first failure
  std::string skew;   // which instances started late, by how much
  std::optional<double> sent_pps, sent_bps, received_pps, received_bps, loss_percent;
};
BOOST_DESCRIBE_STRUCT(stored_run, (), (run, ok, interrupted, error, skew))

struct history_point {
  std::string folder, path, status, load;
  double started_utc = 0;
  std::vector<stored_run> runs;
  spread received_pps, received_bps, loss_percent;  // over the ok runs
  std::optional<double> mrr_pps, ndr_pps, pdr_pps, pdr_loss_target_pct;
};
BOOST_DESCRIBE_STRUCT(history_point, (), (folder, path, status, load, started_utc))

struct series {
  // measurement: the runs' id less the repeat number: a sweep's loads are series apart.
  std::string plan, measurement, test, role, route;
  std::int64_t message_size = 0;
  std::vector<history_point> points;  // oldest first
  std::vector<change_point> changes;  // of the received pps; indexes into `points`
  const change_point* change_at(std::size_t i) const;
};

struct history_filter {
  std::string plan, test;
  std::optional<double> since_utc;  // folders started at or after
};

// where: "detected_at" or "begins_at".
nlohmann::json shift_json(const change_point& c, const char* where, const std::string& folder);

// Over the first `count` points with figures; indexes into `points`.
std::vector<change_point> level_shifts(const std::vector<history_point>& points, std::size_t count);

// For the test that a read stays O(n log n) in the rows.
struct history_cost {
  std::size_t rows = 0;
  std::size_t comparisons = 0;  // finding each row's point
};

// 9999-12-31 23:59:59 UTC: the latest time the store takes.
inline constexpr double latest_utc_s = 253402300799;

std::vector<series> read_history(database& db, const history_filter& f, history_cost* cost = nullptr);
// "2026-12-03", "2026-12-03T08:00[:00][Z]" (UTC) as epoch seconds; else std::invalid_argument.
double parse_since(const std::string& text);
// "2026-12-03 08:00:00"; "-" for none (0) and for a time outside 1970 to 9999.
std::string utc_text(double epoch_s);

std::string history_text(const std::vector<series>& s);
nlohmann::json history_json(const std::vector<series>& s);
std::string history_csv(const std::vector<series>& s);

}  // namespace harness::store
