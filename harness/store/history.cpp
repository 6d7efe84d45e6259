#include "harness/store/history.hpp"

#include "core/base/text.hpp"
#include "core/json/json_fields.hpp"
#include "core/json/json_text.hpp"
#include "harness/report/report.hpp"
#include "harness/store/sql.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <regex>
#include <stdexcept>
#include <tuple>

using nlohmann::json;

namespace harness::store {

namespace {

using series_key = std::tuple<std::string, std::string, std::string, std::string, std::int64_t, std::string>;

// Counts for history_cost.
struct counting_less {
  std::size_t* count;
  bool operator()(std::int64_t a, std::int64_t b) const {
    ++*count;
    return a < b;
  }
};

struct builder {
  history_cost cost;
  std::map<series_key, series> all;
  // Per series, folder id (names may repeat) -> its point: found in O(log n).
  std::map<series_key, std::map<std::int64_t, std::size_t, counting_less>> index;
  // A new point is made from st's columns 0..3.
  history_point& point(const series_key& k, std::int64_t folder_id, SQLite::Statement& st) {
    ++cost.rows;
    auto& s = all[k];
    auto& at = index.try_emplace(k, counting_less{&cost.comparisons}).first->second;
    if (const auto found = at.find(folder_id); found != at.end()) return s.points[found->second];
    std::tie(s.plan, s.measurement, s.test, s.role, s.message_size, s.route) = k;
    at.emplace(folder_id, s.points.size());
    auto& p = s.points.emplace_back();
    p.folder = st.getColumn(0).getString();
    p.path = st.getColumn(1).getString();
    p.status = st.getColumn(2).getString();
    p.started_utc = st.getColumn(3).isNull() ? 0 : st.getColumn(3).getDouble();
    return p;
  }
};

constexpr const char* filter_sql = " WHERE (?1 = '' OR f.plan = ?1) AND COALESCE(f.started_utc, 0) >= ?3";

void bind_filter(SQLite::Statement& st, const history_filter& f) {
  st.bind(1, f.plan);
  st.bind(2, f.test);
  st.bind(3, f.since_utc.value_or(0.0));
}

std::string first_failure(const std::string& failures) {
  const json j = nb::parse_json_bounded(failures);
  return j.is_array() && !j.empty() && j.front().is_string() ? j.front().get<std::string>() : std::string();
}

void read_runs(database& db, const history_filter& f, builder& b) {
  SQLite::Statement st(
      db.sql(),
      std::string(
          "SELECT f.name, f.path, f.status, f.started_utc, f.plan, r.test, r.role, r.message_size, r.route, r.load,"
          " r.run, r.ok, r.interrupted, r.error, r.failures, r.sent_pps, r.sent_bps, r.received_pps, r.received_bps,"
          " r.loss_percent, r.measurement, f.id, r.skew FROM runs r JOIN folders f ON f.id = r.folder_id") +
          filter_sql + " AND (?2 = '' OR r.test = ?2) AND r.search_trial = 0 ORDER BY f.id, r.seq");
  bind_filter(st, f);
  while (st.executeStep()) {
    auto& p = b.point({st.getColumn(4).getString(), st.getColumn(20).getString(), st.getColumn(5).getString(),
                       st.getColumn(6).getString(), st.getColumn(7).getInt64(), st.getColumn(8).getString()},
                      st.getColumn(21).getInt64(), st);
    p.load = st.getColumn(9).getString();
    stored_run r;
    r.run = st.getColumn(10).getString();
    r.ok = st.getColumn(11).getInt() != 0;
    r.interrupted = st.getColumn(12).getInt() != 0;
    r.error = !st.getColumn(13).isNull() ? st.getColumn(13).getString() : first_failure(st.getColumn(14).getString());
    r.sent_pps = column_double(st, 15);
    r.sent_bps = column_double(st, 16);
    r.received_pps = column_double(st, 17);
    r.received_bps = column_double(st, 18);
    r.loss_percent = column_double(st, 19);
    if (!st.getColumn(22).isNull()) r.skew = st.getColumn(22).getString();
    p.runs.push_back(std::move(r));
  }
}

void read_searches(database& db, const history_filter& f, builder& b) {
  SQLite::Statement st(
      db.sql(),
      std::string(
          "SELECT f.name, f.path, f.status, f.started_utc, f.plan, s.test, s.role, s.message_size, s.loss_target_pct,"
          " s.rate_pps, s.mrr_received_pps, s.run, f.id FROM searches s JOIN folders f ON f.id = s.folder_id") +
          filter_sql + " AND (?2 = '' OR s.test = ?2) ORDER BY f.id, s.loss_target_pct");
  bind_filter(st, f);
  while (st.executeStep()) {
    static const std::regex repeat_number("-r[0-9]+$");
    auto& p = b.point({st.getColumn(4).getString(), std::regex_replace(st.getColumn(11).getString(), repeat_number, ""),
                       st.getColumn(5).getString(), st.getColumn(6).getString(), st.getColumn(7).getInt64(), ""},
                      st.getColumn(12).getInt64(), st);
    const double target = st.getColumn(8).getDouble();
    const auto rate = column_double(st, 9);
    p.mrr_pps = column_double(st, 10);
    // NDR: no loss allowed; PDR: the most lenient target above zero.
    if (target == 0) p.ndr_pps = rate;
    else if (!p.pdr_loss_target_pct || target > *p.pdr_loss_target_pct) {
      p.pdr_pps = rate;
      p.pdr_loss_target_pct = target;
    }
  }
}

void describe_point(history_point& p) {
  std::vector<double> pps, bps, loss;
  for (const auto& r : p.runs)
    if (r.ok && r.received_pps) {
      pps.push_back(*r.received_pps);
      bps.push_back(r.received_bps.value_or(0));
      loss.push_back(r.loss_percent.value_or(0));
    }
  p.received_pps = describe(pps);
  p.received_bps = describe(bps);
  p.loss_percent = describe(loss);
}

// RFC 4180, quoted only where needed: plain rows stay easy to grep.
std::string csv_field(const std::string& text) {
  return text.find_first_of(",\"\r\n") == std::string::npos ? text : csv_quote(text);
}

json optional_json(const std::optional<double>& x) { return x ? json(*x) : json(); }

std::string figure(const spread& s, double scale, const char* format) {
  if (s.n == 0) return "-";
  std::string text = fmt::format(fmt::runtime(format), s.mean * scale);
  if (s.has_interval())
    text += fmt::format(" [{}, {}]", fmt::format(fmt::runtime(format), s.ci_low * scale),
                        fmt::format(fmt::runtime(format), s.ci_high * scale));
  return text;
}

std::string point_status(const history_point& p) {
  std::size_t failed = 0, skewed = 0;
  for (const auto& r : p.runs) {
    failed += r.ok ? 0 : 1;
    skewed += r.skew.empty() ? 0 : 1;
  }
  if (p.runs.empty()) return "search";
  if (failed == 0 && skewed > 0)
    return p.runs.size() > 1 ? fmt::format("{} runs, {} skewed", p.runs.size(), skewed) : "skewed";
  if (failed == 0) return p.runs.size() > 1 ? fmt::format("{} runs", p.runs.size()) : "ok";
  const auto& bad = *std::find_if(p.runs.begin(), p.runs.end(), [](const stored_run& r) { return !r.ok; });
  return fmt::format("{} of {} failed{}", failed, p.runs.size(), bad.interrupted ? " (interrupted)" : "");
}

}  // namespace

std::vector<change_point> level_shifts(const std::vector<history_point>& points, std::size_t count) {
  std::vector<double> figures;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < std::min(count, points.size()); ++i)
    if (points[i].received_pps.n > 0) {
      figures.push_back(points[i].received_pps.mean);
      index.push_back(i);
    }
  auto found = find_change_points(figures);
  for (auto& c : found) {
    c.begins = index[c.begins];
    c.detected = index[c.detected];
  }
  return found;
}

const change_point* series::change_at(std::size_t i) const {
  for (const auto& c : changes)
    if (c.begins == i) return &c;
  return nullptr;
}

std::vector<series> read_history(database& db, const history_filter& f, history_cost* cost) {
  return db.guarded([&] {
    builder b;
    read_runs(db, f, b);
    read_searches(db, f, b);
    std::vector<series> out;
    for (auto& [key, s] : b.all) {
      for (auto& p : s.points) describe_point(p);
      std::stable_sort(s.points.begin(), s.points.end(),
                       [](const history_point& a, const history_point& z) { return a.started_utc < z.started_utc; });
      s.changes = level_shifts(s.points, s.points.size());
      out.push_back(std::move(s));
    }
    if (cost) *cost = b.cost;
    return out;
  });
}

double parse_since(const std::string& text) {
  std::tm tm{};
  const char* formats[] = {"%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%MZ",
                           "%Y-%m-%dT%H:%M",     "%Y-%m-%d %H:%M",    "%Y-%m-%d"};
  for (const char* format : formats) {
    tm = {};
    const char* end = ::strptime(text.c_str(), format, &tm);
    if (end && *end == '\0') return static_cast<double>(::timegm(&tm));
  }
  throw std::invalid_argument(
      fmt::format("--since {}: not a date (YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS][Z], UTC)", text));
}

std::string utc_text(double epoch_s) {
  if (!(epoch_s > 0 && epoch_s <= latest_utc_s)) return "-";
  const auto t = std::chrono::sys_seconds(std::chrono::seconds(static_cast<std::int64_t>(epoch_s)));
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", t);
}

std::string history_text(const std::vector<series>& all) {
  if (all.empty()) return "no runs in the store match\n";
  std::string out;
  for (const auto& s : all) {
    // Folder names escaped: none moves the cursor or forges a line.
    using nb::printable;
    out += fmt::format("plan {}, {}: test {}, {}, {} B{}: {} point(s)\n", printable(s.plan), printable(s.measurement),
                       printable(s.test), printable(s.role), s.message_size,
                       s.route.empty() ? "" : ", " + printable(s.route), s.points.size());
    text_table t(
        {"date (UTC)", "folder", "runs", "received pps", "received Mbit/s", "loss %", "PDR pps", "level shift"});
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i];
      const auto* c = s.change_at(i);
      t.add({utc_text(p.started_utc), printable(p.folder), point_status(p), figure(p.received_pps, 1, "{:.1f}"),
             figure(p.received_bps, 1e-6, "{:.2f}"), figure(p.loss_percent, 1, "{:.3f}"),
             p.pdr_pps ? fmt::format("{:.1f} ({:g} %)", *p.pdr_pps, *p.pdr_loss_target_pct) : "-",
             c ? fmt::format("began here: {:+.1f} %", c->change_percent()) : "-"});
    }
    out += t.text();
    for (const auto& p : s.points)
      for (const auto& r : p.runs)
        if (!r.skew.empty()) out += fmt::format("  {} {} skewed: {}\n", p.folder, r.run, r.skew);
    out += "\n";
  }
  return out + fmt::format(
                   "(a folder with repeats: the mean and its 95 % interval [low, high]; level shift: where a shift "
                   "of the received pps began, by a two-sided CUSUM with an in-control run length of ~{:.0f} points)\n",
                   cusum_in_control_arl);
}

json shift_json(const change_point& c, const char* where, const std::string& folder) {
  return {{"change_percent", c.change_percent()}, {"mean_before", c.before}, {"mean_after", c.after}, {where, folder}};
}

namespace {

json stored_run_json(const stored_run& r) {
  json j = nb::write_described(r);
  j.update({{"sent_pps", optional_json(r.sent_pps)},
            {"sent_bits_per_second", optional_json(r.sent_bps)},
            {"received_pps", optional_json(r.received_pps)},
            {"received_bits_per_second", optional_json(r.received_bps)},
            {"loss_percent", optional_json(r.loss_percent)}});
  return j;
}

json point_json(const series& s, std::size_t i) {
  const history_point& p = s.points[i];
  json j = nb::write_described(p);
  j.update({{"date_utc", utc_text(p.started_utc)},
            {"received_pps", to_json(p.received_pps)},
            {"received_bits_per_second", to_json(p.received_bps)},
            {"loss_percent", to_json(p.loss_percent)},
            {"mrr_pps", optional_json(p.mrr_pps)},
            {"ndr_pps", optional_json(p.ndr_pps)},
            {"pdr_pps", optional_json(p.pdr_pps)},
            {"pdr_loss_target_pct", optional_json(p.pdr_loss_target_pct)}});
  j["runs"] = json::array();
  for (const auto& r : p.runs) j["runs"].push_back(stored_run_json(r));
  const change_point* c = s.change_at(i);
  j["level_shift"] = c ? shift_json(*c, "detected_at", s.points[c->detected].folder) : json(nullptr);
  return j;
}

}  // namespace

json history_json(const std::vector<series>& all) {
  json out = {{"schema", "harness.history/1"}, {"series", json::array()}};
  for (const auto& s : all) {
    json js = {{"plan", s.plan},         {"measurement", s.measurement},   {"test", s.test},
               {"role", s.role},         {"message_size", s.message_size}, {"route", s.route},
               {"points", json::array()}};
    for (std::size_t i = 0; i < s.points.size(); ++i) js["points"].push_back(point_json(s, i));
    out["series"].push_back(std::move(js));
  }
  return out;
}

std::string history_csv(const std::vector<series>& all) {
  std::string out =
      "plan,measurement,test,role,message_size,route,date_utc,folder,status,runs,ok_runs,received_pps,received_pps_ci95_low,"
      "received_pps_ci95_high,received_bits_per_second,loss_percent,ndr_pps,pdr_pps,pdr_loss_target_pct,level_shift_percent\n";
  const auto num = [](const std::optional<double>& x) { return x ? fmt::format("{}", *x) : std::string(); };
  for (const auto& s : all)
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i];
      const auto* c = s.change_at(i);
      const auto& r = p.received_pps;
      const auto mean = [](const spread& x) { return x.n ? std::optional<double>(x.mean) : std::nullopt; };
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(s.plan),
                         csv_field(s.measurement), csv_field(s.test), csv_field(s.role), s.message_size,
                         csv_field(s.route), utc_text(p.started_utc), csv_field(p.folder), csv_field(p.status),
                         p.runs.size(), r.n, num(mean(r)), r.has_interval() ? num(r.ci_low) : "",
                         r.has_interval() ? num(r.ci_high) : "", num(mean(p.received_bps)), num(mean(p.loss_percent)),
                         num(p.ndr_pps), num(p.pdr_pps), num(p.pdr_loss_target_pct),
                         c ? fmt::format("{:.1f}", c->change_percent()) : "");
    }
  return out;
}

}  // namespace harness::store
