#include "harness/store/record.hpp"

#include "core/base/text.hpp"
#include "harness/report/model/skew.hpp"
#include "harness/report/model/stats.hpp"
#include "harness/report/results.hpp"
#include "harness/store/import_checks.hpp"
#include "harness/store/sql.hpp"

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <map>
#include <regex>
#include <set>

namespace fs = std::filesystem;
using nlohmann::json;

namespace harness::store {

namespace {

std::int64_t put(SQLite::Database& db, const std::string& table, const values& row, const std::string& where) {
  check_numbers(row, where);
  return insert(db, table, row);
}

double now_utc() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// Which measurement each run is (the repeats' grouping of the reports): runs that differ only by their
// repeat number share it, and history follows it across folders.
struct measurement {
  std::string key, load, route;
};

std::vector<measurement> measurements(const std::vector<run_summary>& runs) {
  std::vector<measurement> out(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) out[i].key = runs[i].run.id;  // search trials: their own
  for (const auto& g : group_repeats(runs))
    for (std::size_t i : g.runs) out[i] = {g.key, g.load, g.route};
  return out;
}

values rates_of(const char* prefix, const rates& r) {
  const std::string p = prefix;
  return {{p + "_packets", static_cast<std::int64_t>(r.packets)}, {p + "_pps", r.pps}, {p + "_bps", r.bps}};
}

values latency_of(const run_summary& s) {
  const nb::latency_histogram* h = nullptr;
  if (s.rr && s.rr->latency.count()) h = &s.rr->latency;
  else if (s.probe && s.probe->error.empty() && s.probe->loaded.count()) h = &s.probe->loaded;
  if (!h) return {};
  const json p = h->summary_json();
  return {{"latency_p50_us", p.at("p50_us").get<double>()},
          {"latency_p90_us", p.at("p90_us").get<double>()},
          {"latency_p99_us", p.at("p99_us").get<double>()},
          {"latency_p999_us", p.at("p999_us").get<double>()},
          {"latency_max_us", p.at("max_us").get<double>()}};
}

// The figures of an ok run; a failed one has none (NULL), never zeros.
values figures_of(const run_summary& s) {
  if (!s.ok) return {};
  values v = rates_of("sent", s.sender);
  append(v, rates_of("received", s.receiver));
  append(v, {{"lost", static_cast<std::int64_t>(s.lost)},
             {"path_loss", static_cast<std::int64_t>(s.path_loss)},
             {"kernel_drops", s.drops_known ? value(static_cast<std::int64_t>(s.kernel_drops)) : value(nullptr)},
             {"loss_percent", s.loss_percent},
             {"start_skew_ms", s.start_skew_ms}});
  if (s.steady)
    append(v, {{"steady_sent_pps", s.steady->sender.pps},
               {"steady_received_pps", s.steady->receiver.pps},
               {"steady_received_bps", s.steady->receiver.bps}});
  if (s.limit) append(v, {{"limit_kind", s.limit->limit}, {"limit_text", s.limit->text}});
  append(v, latency_of(s));
  return v;
}

void insert_instances(SQLite::Database& db, std::int64_t run_row, const run_summary& s) {
  for (const auto& i : s.run.instances) {
    values v = {{"run_id", run_row},
                {"name", i.name},
                {"client", i.client},
                {"server", i.server},
                {"category", i.category},
                {"ok", static_cast<std::int64_t>(i.problems.empty())},
                {"problems", json(i.problems).dump()}};
    if (i.result && i.result->ok) {
      const auto& t = *i.result;
      append(v, {{"sent_packets", static_cast<std::int64_t>(t.sender.packets)},
                 {"sent_pps", t.sender.pps},
                 {"sent_bps", t.sender.bits_per_second},
                 {"received_packets", static_cast<std::int64_t>(t.receiver.packets)},
                 {"received_pps", t.receiver.pps},
                 {"received_bps", t.receiver.bits_per_second},
                 {"lost", static_cast<std::int64_t>(t.loss.packets)},
                 {"path_loss", static_cast<std::int64_t>(t.loss.path)},
                 {"kernel_drops",
                  drops_known(t) ? value(static_cast<std::int64_t>(t.loss.receiver_kernel_drops)) : value(nullptr)},
                 {"loss_percent", t.loss.percent},
                 {"start_offset_ms", (t.actual_start - s.run.t0) * 1e3}});
      if (t.verdict) append(v, {{"verdict_limit", t.verdict->limit}, {"verdict_text", t.verdict->text}});
    }
    put(db, "instances", v, fmt::format("run {}, instance {}", s.run.id, i.name));
  }
}

void insert_runs(SQLite::Database& db, std::int64_t folder, const std::vector<run_summary>& runs) {
  const auto m = measurements(runs);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto& s = runs[k];
    values v = {{"folder_id", folder},
                {"seq", static_cast<std::int64_t>(k)},
                {"run", s.run.id},
                {"measurement", m[k].key},
                {"test", s.run.test},
                {"role", s.run.role},
                {"kind", std::string(nb::to_string(s.run.kind))},
                {"topology", std::string(to_string(s.run.topo))},
                {"message_size", static_cast<std::int64_t>(s.run.message_size)},
                {"load", m[k].load},
                {"route", m[k].route},
                {"search_trial", static_cast<std::int64_t>(is_search_trial(s.run))},
                {"ok", static_cast<std::int64_t>(s.ok)},
                {"interrupted", static_cast<std::int64_t>(s.run.spec.value("interrupted", false))},
                {"error", s.run.error.empty() ? value(nullptr) : value(s.run.error)},
                {"failures", json(s.failures).dump()},
                {"skew", s.skewed() ? value(late_words(s)) : value(nullptr)},
                {"t0", s.run.t0},
                {"summary", to_json(s).dump()}};
    append(v, figures_of(s));
    const std::int64_t row = put(db, "runs", v, fmt::format("run {}", s.run.id));
    insert_instances(db, row, s);
  }
}

// A search's row per goal: its loss ratio in percent, and as its rate the relevant lower bound (an intended
// load, as the older search's rate was the offered rate found) in packets and payload bits per second,
// "converged" when the result is regular. The record read as every version wrote it (search_record.hpp).
void insert_searches(SQLite::Database& db, std::int64_t folder, const std::vector<json>& searches) {
  for (const auto& s : searches) {
    const std::string id = s.at("id").get<std::string>();
    const auto record = read_search_of(s, id);
    const std::int64_t size = message_size_of(s, id);
    const auto mrr = record.mrr ? value(record.mrr->forwarding_rate) : value(nullptr);
    std::set<double> stored;  // one row per loss ratio: two goals at one ratio keep the first's
    for (const auto& r : record.goal_results) {
      // In percent, as written: 0.9 % read as a ratio and back is 0.9000000000000001 without the rounding.
      const double target = std::round(r.g.loss_ratio * 100 * 1e9) / 1e9;
      if (!stored.insert(target).second) continue;
      const auto& pps = r.relevant_lower_bound;
      put(db, "searches",
          {{"folder_id", folder},
           {"run", id},
           {"test", s.at("test").get<std::string>()},
           {"role", s.at("role").get<std::string>()},
           {"message_size", size},
           {"loss_target_pct", target},
           {"rate_pps", optional(pps)},
           {"rate_bps", pps ? value(*pps * static_cast<double>(size) * 8.0) : value(nullptr)},
           {"converged", static_cast<std::int64_t>(r.regular)},
           {"mrr_received_pps", mrr}},
          fmt::format("search {}", id));
    }
  }
}

void insert_hosts(SQLite::Database& db, std::int64_t folder, const json& env) {
  const json hosts = env.value("hosts", json::object());
  for (const auto& [name, h] : hosts.items()) {
    const json check = h.value("check", json::object());
    put(db, "hosts",
        {{"folder_id", folder},
         {"name", name},
         {"address", h.value("address", "")},
         {"launcher", h.value("launcher", "")},
         {"kernel", check.value("facts", json::object()).value("kernel", "")},
         {"check_json", check.dump()}},
        fmt::format("host {}", name));
  }
}

// The signal an interrupted folder says it was stopped by (0: none said).
int signal_of(const json& env) {
  const json i = env.value("interrupted", json());
  const json n = i.is_object() ? i.value("signal", json()) : json();
  return n.is_number_unsigned() && n.get<std::uint64_t>() < 256 ? n.get<int>() : 0;
}

std::string status_of(const folder_content& f) {
  if (f.interrupted) return "interrupted";
  if (!f.problems.empty()) return "failed";
  return f.skews.empty() ? "ok" : "skewed";
}

}  // namespace

std::string folder_name(const std::string& dir_or_name) {
  fs::path p = fs::path(dir_or_name).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

std::string plan_of_folder(const std::string& name) {
  static const std::regex shape(R"(^(.+)-\d{8}T\d{6}Z(-\d+)?$)");
  std::smatch m;
  return std::regex_match(name, m, shape) ? m[1].str() : name;
}

folder_content read_folder(const fs::path& dir, std::vector<run_summary> runs, std::vector<json> searches) {
  folder_content f;
  f.path = fs::absolute(dir).lexically_normal();
  if (!f.path.has_filename()) f.path = f.path.parent_path();
  f.name = folder_name(f.path.string());
  f.plan = plan_of_folder(f.name);
  f.environment = json::object();
  if (fs::exists(dir / "environment.json")) {
    f.environment = read_results_json(dir, "environment.json");
    if (!f.environment.is_object())
      throw std::runtime_error(fmt::format("{}: not a JSON object", (dir / "environment.json").string()));
  }
  f.started_utc = started_of(f.environment, dir / "environment.json");
  f.plan_toml = read_plan_copy(dir);
  f.interrupted = f.environment.contains("interrupted");
  f.problems = folder_problems(dir, runs);
  f.skews = folder_skews(runs);
  f.runs = std::move(runs);
  f.searches = std::move(searches);
  return f;
}

folder_content read_folder(const fs::path& dir) {
  std::vector<run_summary> runs;
  for (auto r : load_raw(dir)) runs.push_back(summarize(std::move(r)));
  auto searches = load_searches(dir);
  return read_folder(dir, std::move(runs), std::move(searches));
}

void record(database& db, const folder_content& f) {
  db.guarded([&] {
    SQLite::Transaction t(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    const auto others = rows_of_others(db.sql(), f.path.string());
    SQLite::Statement gone(db.sql(), "DELETE FROM folders WHERE path = ?");
    gone.bind(1, f.path.string());
    gone.exec();
    const std::string error = f.interrupted         ? fmt::format("interrupted by signal {}", signal_of(f.environment))
                              : !f.problems.empty() ? f.problems.front()
                              : !f.skews.empty()    ? f.skews.front()
                                                    : std::string();
    const std::int64_t folder =
        put(db.sql(), "folders",
            {{"name", f.name},
             {"path", f.path.string()},
             {"plan", f.plan},
             {"started_utc", f.started_utc > 0 ? value(f.started_utc) : value(nullptr)},
             {"harness_version", f.environment.value("harness_version", "")},
             {"status", status_of(f)},
             {"error", error.empty() ? value(nullptr) : value(error)},
             {"runs_failed", static_cast<std::int64_t>(std::count_if(f.runs.begin(), f.runs.end(),
                                                                     [](const run_summary& s) { return !s.ok; }))},
             {"environment", f.environment.dump()},
             {"plan_toml", f.plan_toml},
             {"imported_utc", now_utc()}},
            "environment.json");
    insert_hosts(db.sql(), folder, f.environment);
    insert_runs(db.sql(), folder, f.runs);
    insert_searches(db.sql(), folder, f.searches);
    // An import replaces its own folder's rows and no other's: should anything in the file (a trigger
    // added since it was opened) have changed another folder's, nothing is written.
    if (const std::string changed = rows_changed(others, rows_of_others(db.sql(), f.path.string())); !changed.empty())
      throw store_error(
          fmt::format("results database {}: recording {} changed rows of other folders ({}): not "
                      "recorded; {}",
                      db.path().string(), nb::printable(f.path.string()), changed, repair_hint(db.path())));
    t.commit();
  });
}

stored_folder find_folder(database& db, const std::string& path_or_name) {
  const bool by_path = path_or_name.find('/') != std::string::npos;
  fs::path path = fs::absolute(path_or_name).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  return db.guarded([&] {
    SQLite::Statement st(db.sql(),
                         by_path ? "SELECT name, path, plan, status, COALESCE(error, '') FROM folders WHERE path = ?"
                                 : "SELECT name, path, plan, status, COALESCE(error, '') FROM folders WHERE name = ?"
                                   " ORDER BY path");
    st.bind(1, by_path ? path.string() : path_or_name);
    std::vector<stored_folder> found;
    while (st.executeStep())
      found.push_back({st.getColumn(0).getString(), st.getColumn(1).getString(), st.getColumn(2).getString(),
                       st.getColumn(3).getString(), st.getColumn(4).getString()});
    if (found.empty())
      throw store_error(fmt::format("results folder {} is not in {}", path_or_name, db.path().string()));
    if (found.size() > 1) {
      std::vector<std::string> paths;
      for (const auto& f : found) paths.push_back(f.path);
      throw store_error(fmt::format("results folder {} is in {} {} times ({}): name it by its path", path_or_name,
                                    db.path().string(), found.size(), fmt::join(paths, ", ")));
    }
    return found.front();
  });
}

}  // namespace harness::store
