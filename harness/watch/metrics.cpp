#include "harness/watch/metrics.hpp"

#include "core/base/text.hpp"
#include "core/search/search_record.hpp"
#include "harness/report/model/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace harness::watch {

namespace {

// Names follow Prometheus' conventions: base units (seconds, bytes, ratios of 0..1), `_total` on counters,
// the unit last. Data rates are in bytes per second, not bits, because bytes are Prometheus' base unit for
// data (node_exporter's network counters are bytes): a dashboard multiplies by 8 for Mbit/s, and a query
// mixing netbench with host metrics needs no conversion. Each value is a gauge: a figure measured over a
// finished run, not a count that keeps growing, except the run counters.
struct family {
  const char* name;
  const char* type;
  const char* help;
  std::map<std::string, double> samples;  // rendered label set -> value; a later run of a key replaces it
};

enum fam : std::size_t {
  received_pps,
  sent_pps,
  received_bytes,
  sent_bytes,
  loss,
  pdr,
  round_trip,
  last_run,
  regression,
  fam_count
};

std::vector<family> families() {
  return {
      {"netbench_received_packets_per_second",
       "gauge",
       "Packets received per second in the last run (instance all: the sum)",
       {}},
      {"netbench_sent_packets_per_second",
       "gauge",
       "Packets sent per second in the last run (instance all: the sum)",
       {}},
      {"netbench_received_bytes_per_second", "gauge", "Payload bytes received per second in the last run", {}},
      {"netbench_sent_bytes_per_second", "gauge", "Payload bytes sent per second in the last run", {}},
      {"netbench_loss_ratio", "gauge", "Packets lost over packets sent (0..1) in the last run", {}},
      {"netbench_pdr_packets_per_second",
       "gauge",
       "A rate search goal's relevant lower bound (RFC 9971): the highest load, aggregate packets per second, that met the goal",
       {}},
      {"netbench_round_trip_seconds",
       "gauge",
       "Round-trip time percentile of the last run: request/response transactions or the latency probe",
       {}},
      {"netbench_last_run_timestamp_seconds",
       "gauge",
       "When the last run of the test started (its T0, unix seconds)",
       {}},
      {"netbench_regression",
       "gauge",
       "1 when the last run fell below its baseline in the results database, else 0",
       {}},
  };
}

using label_list = std::vector<std::pair<const char*, std::string>>;

std::string render_labels(const label_list& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", k, escape_label_value(v));
  return out;
}

// OpenMetrics numbers: shortest round-trip decimal; NaN and infinities by their names.
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

// The plan's instance is `netbench_instance`: `instance` (and `job`) are the labels Prometheus gives every
// series of a target, and a scraped label of that name would be renamed to `exported_instance`.
// `measurement` is the reports' and the store's name of a measurement (test x role x message size x a
// sweep's load x a pair's route, "pps-m64"): without it a sweep's loads or a pairs test's routes would be
// one series each, overwriting one another.
label_list base_labels(const std::string& plan, const std::string& test, const std::string& measurement,
                       const std::string& role, std::uint32_t size, const std::string& instance) {
  return {{"plan", plan},
          {"test", test},
          {"measurement", measurement},
          {"role", role},
          {"message_size", std::to_string(size)},
          {"netbench_instance", instance}};
}

void set(family& f, const label_list& labels, double v) { f.samples[render_labels(labels)] = v; }

void add_latency(family& f, label_list labels, const char* source, const nb::latency_histogram& h) {
  if (h.count() == 0) return;
  labels.emplace_back("source", source);
  for (const auto& [p, text] : {std::pair{50.0, "50"}, {90.0, "90"}, {99.0, "99"}, {99.9, "99.9"}}) {
    auto l = labels;
    l.emplace_back("percentile", text);
    set(f, l, static_cast<double>(h.percentile_ns(p)) / 1e9);
  }
}

void add_run(std::vector<family>& f, const std::string& plan, const std::string& measurement, const run_summary& s) {
  if (!s.ok) return;  // a failed or stopped run has no figures, never zeros
  const auto& r = s.run;
  const auto all = base_labels(plan, r.test, measurement, r.role, r.message_size, "all");
  set(f[received_pps], all, s.receiver.pps);
  set(f[sent_pps], all, s.sender.pps);
  set(f[received_bytes], all, s.receiver.bps / 8);
  set(f[sent_bytes], all, s.sender.bps / 8);
  set(f[loss], all, s.loss_percent / 100);
  set(f[last_run], all, r.t0);
  if (s.rr) add_latency(f[round_trip], all, "request_response", s.rr->latency);
  if (s.probe && s.probe->error.empty()) {
    add_latency(f[round_trip], all, "probe_idle", s.probe->idle);
    add_latency(f[round_trip], all, "probe_loaded", s.probe->loaded);
  }
  for (const auto& i : r.instances) {
    if (!i.result || !i.result->ok) continue;
    const auto& t = *i.result;
    const auto one = base_labels(plan, r.test, measurement, r.role, r.message_size, i.name);
    set(f[received_pps], one, t.receiver.pps);
    set(f[sent_pps], one, t.sender.pps);
    set(f[received_bytes], one, t.receiver.bits_per_second / 8);
    set(f[sent_bytes], one, t.sender.bits_per_second / 8);
    set(f[loss], one, t.loss.percent / 100);
  }
}

// Per goal its relevant lower bound, the record read as every version wrote it (search_record.hpp).
void add_search(family& f, const std::string& plan, const nlohmann::json& s) {
  const auto record = nb::search::read_search_record(s.at("search"));
  for (const auto& r : record.goal_results) {
    if (!r.relevant_lower_bound) continue;  // no lower bound: no rate
    auto labels = base_labels(plan, s.at("test").get<std::string>(), s.at("id").get<std::string>(),
                              s.at("role").get<std::string>(), s.at("message_size").get<std::uint32_t>(), "all");
    labels.emplace_back("loss_target_ratio", number(r.g.loss_ratio));
    set(f, labels, *r.relevant_lower_bound);
  }
}

}  // namespace

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size();) {
    const auto c = static_cast<unsigned char>(v[i]);
    const std::size_t n = nb::utf8_length(v.substr(i));  // OpenMetrics text is UTF-8, one bad byte voids it
    const bool control = c < 0x20 || c == 0x7f || (n == 2 && c == 0xc2 && static_cast<unsigned char>(v[i + 1]) < 0xa0);
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\\\n";
    else if (c == '\r') out += "\\\\r";
    else if (c == '\t') out += "\\\\t";
    else if (n == 0 || control)  // C0, DEL, C1, or a byte that begins no UTF-8 character: \xNN per byte
      for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k)
        out += fmt::format("\\\\x{:02x}", static_cast<unsigned char>(v[i + k]));
    else out.append(v.substr(i, n));
    i += std::max<std::size_t>(n, 1);
  }
  return out;
}

std::string render_openmetrics(const run_counts& counts, const std::optional<completed_run>& last) {
  auto f = families();
  if (last) {
    // Repeats of a measurement: the last ok one's figures (search trials are in no group).
    for (const auto& g : group_repeats(last->runs))
      for (std::size_t i : g.runs) add_run(f, last->plan, g.key, last->runs[i]);
    for (const auto& s : last->searches) add_search(f[pdr], last->plan, s);
    // Every measurement of the run, 0 unless the store judged it a regression.
    for (const auto& [labels, v] : f[received_pps].samples)
      if (labels.ends_with("netbench_instance=\"all\"")) f[regression].samples.emplace(labels, 0.0);
    if (last->verdict)
      for (const auto& m : last->verdict->measurements)
        if (m.regression)
          set(f[regression],
              base_labels(last->plan, m.test, m.measurement, m.role, static_cast<std::uint32_t>(m.message_size), "all"),
              1);
  }
  std::string out;
  for (const auto& fam : f) {
    out += fmt::format("# TYPE {} {}\n# HELP {} {}\n", fam.name, fam.type, fam.name, escape_label_value(fam.help));
    for (const auto& [labels, v] : fam.samples) out += fmt::format("{}{{{}}} {}\n", fam.name, labels, number(v));
  }
  // Counters: the family has the bare name, its sample the `_total` suffix (OpenMetrics).
  for (const auto& [name, help, v] :
       {std::tuple{"netbench_runs", "Runs of the plan this watch made (results folders)", counts.runs},
        {"netbench_failed_runs", "Runs of the plan with a failed or missing run inside", counts.failed},
        {"netbench_interrupted_runs", "Runs of the plan stopped by a signal", counts.interrupted}})
    out += fmt::format("# TYPE {} counter\n# HELP {} {}\n{}_total {}\n", name, name, help, name, v);
  out += "# EOF\n";
  return out;
}

}  // namespace harness::watch
