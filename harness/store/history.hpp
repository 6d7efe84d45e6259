#pragma once
// A measurement followed over time: per plan and measurement (test, role, message size, sweep load, route), one point
// per results folder: its runs' received pps and bit/s and loss, their mean and 95 % interval when the folder had
// repeats, and the search's NDR / PDR where one ran.
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
  std::string error;  // the run's error, else its first failure
  std::string skew;   // an ok run's instances that started late, and by how much ("" when none)
  std::optional<double> sent_pps, sent_bps, received_pps, received_bps, loss_percent;
};
// Its JSON fields but the rates (named as the JSON's), named as the members.
BOOST_DESCRIBE_STRUCT(stored_run, (), (run, ok, interrupted, error, skew))

struct history_point {
  std::string folder, path, status, load;
  double started_utc = 0;
  std::vector<stored_run> runs;
  spread received_pps, received_bps, loss_percent;  // over the ok runs
  std::optional<double> mrr_pps, ndr_pps, pdr_pps, pdr_loss_target_pct;
};
// Its JSON fields but the figures, named as the members.
BOOST_DESCRIBE_STRUCT(history_point, (), (folder, path, status, load, started_utc))

struct series {
  // measurement: the runs' id without the repeat number ("pps-m64", "sweep-m64-100m", "tcp-m1400-a-to-b"),
  // the reports' grouping of repeats: a sweep's loads are series of their own.
  std::string plan, measurement, test, role, route;
  std::int64_t message_size = 0;
  std::vector<history_point> points;  // oldest first
  // Level shifts of the received pps (changepoint.hpp), over the points with figures; their indexes are
  // into `points`.
  std::vector<change_point> changes;
  // The shift that began at points[i], if any.
  const change_point* change_at(std::size_t i) const;
};

struct history_filter {
  std::string plan, test;
  std::optional<double> since_utc;  // folders started at or after
};

// A level shift as the history and the regression records give it: its change and the means before and
// after, and the folder it is placed at under `where` ("detected_at", "begins_at").
nlohmann::json shift_json(const change_point& c, const char* where, const std::string& folder);

// The level shifts of the first `count` points (those with figures; indexes into `points`).
std::vector<change_point> level_shifts(const std::vector<history_point>& points, std::size_t count);

// The work a read did, for a test that the reading stays O(n log n) in the rows: a folder's point is
// found through an index, never by scanning the points already read.
struct history_cost {
  std::size_t rows = 0;         // rows of runs and searches read
  std::size_t comparisons = 0;  // folder keys compared to find each row's point
};

// The last second a date shows as YYYY-MM-DD (9999-12-31 23:59:59 UTC): the latest time the store takes.
inline constexpr double latest_utc_s = 253402300799;

std::vector<series> read_history(database& db, const history_filter& f, history_cost* cost = nullptr);
// "2026-12-03", "2026-12-03T08:00", "2026-12-03T08:00:00Z" (UTC) as seconds since the epoch; throws
// std::invalid_argument naming the text otherwise.
double parse_since(const std::string& text);
// "2026-12-03 08:00:00"; "-" for none (0), and for a time outside 1970 to 9999 (a store written before
// times were checked at import).
std::string utc_text(double epoch_s);

std::string history_text(const std::vector<series>& s);
nlohmann::json history_json(const std::vector<series>& s);
std::string history_csv(const std::vector<series>& s);

}  // namespace harness::store
