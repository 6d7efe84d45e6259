// Run and instance records to and from their JSON files, and a run's summary as results.json writes it.
#include "harness/report/model/aggregate.hpp"
#include "harness/report/model/skew.hpp"

#include "core/json/json_fields.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace harness {

using nlohmann::json;

namespace {

// Written and read from one list.
template <class R>
using text_fields = std::pair<const char*, std::string R::*>;

constexpr text_fields<instance_record> instance_texts[] = {{"instance", &instance_record::name},
                                                           {"client", &instance_record::client},
                                                           {"server", &instance_record::server},
                                                           {"client_address", &instance_record::client_address},
                                                           {"server_address", &instance_record::server_address},
                                                           {"category", &instance_record::category},
                                                           {"error", &instance_record::error},
                                                           {"stderr", &instance_record::stderr_text}};

constexpr text_fields<run_record> run_texts[] = {
    {"id", &run_record::id}, {"test", &run_record::test}, {"role", &run_record::role}};

}  // namespace

json to_json(const instance_record& i) {
  json j = {{"exit_code", i.exit_code},
            {"timed_out", i.timed_out},
            {"samples", i.samples},
            {"result", i.result ? nb::to_json(*i.result) : json(nullptr)}};
  for (const auto& [key, member] : instance_texts) j[key] = i.*member;
  return j;
}

namespace {

// Read as the wire formats are: typed fields, unknown ones refused.
using record_fields = nb::json_fields<std::runtime_error>;

template <class R, std::size_t N>
void read_texts(record_fields& f, R& r, const text_fields<R> (&fields)[N]) {
  for (const auto& [key, member] : fields) r.*member = f.get<std::string>(key);
}

// Anything but what to_string wrote is not our file.
template <class E>
E named(record_fields& f, const std::string& id, const char* key, std::optional<E> (*parse)(std::string_view)) {
  const auto text = f.get<std::string>(key);
  if (const auto value = parse(text)) return *value;
  throw std::runtime_error(fmt::format("run {}: {} '{}' is unknown", id, key, text));
}

}  // namespace

void read_result(instance_record& i, const json& result) {
  i.result = nb::result_from_json(result);
  i.interrupted = i.result->interrupted.has_value();  // netload's partial result after a signal
}

instance_record instance_from_json(const json& j) {
  record_fields f(j, "instance");
  instance_record i;
  read_texts(f, i, instance_texts);
  i.exit_code = f.get<int>("exit_code");
  i.timed_out = f.get<bool>("timed_out");
  if (const json result = f.get<json>("result"); !result.is_null()) read_result(i, result);
  i.samples = f.get_or<json>("samples", json::array());  // older records lack it
  if (!i.samples.is_array()) f.fail("samples", "must be an array");
  for (const json& s : i.samples) sample_interval(s);  // read as the report will, so a bad one names this file
  f.done();
  return i;
}

run_record run_from_json(const json& spec) {
  record_fields f(spec, "run");
  run_record r;
  r.spec = spec;
  read_texts(f, r, run_texts);
  r.topo = named<topology>(f, r.id, "topology", topology_named);
  r.kind = named<nb::test_kind>(f, r.id, "kind", nb::parse_test_kind);
  r.message_size = f.get<std::uint32_t>("message_size");
  // Written only when they happened.
  r.error = f.get_or<std::string>("error", "");
  r.interrupted = f.get_or<bool>("interrupted", false);
  r.measured_s = f.get_or<double>("measured_s", 0.0);
  r.duration = f.get<double>("duration");
  // No T0 when it failed before its start instant.
  r.t0 = r.error.empty() || spec.contains("t0") ? f.get<double>("t0") : 0.0;
  r.warmup = f.get<double>("warmup");
  r.interval = f.get<double>("interval");
  r.skew_bound_ms = f.get<double>("skew_bound_ms");
  // The rest stays in r.spec; newer fields (requested_rate, probe, ...) are absent from older folders.
  f.known({"order", "repeat", "instances", "requested_pps", "requested_rate", "search_trial", "bidirectional", "probe",
           "clock_offsets_ms", "circuit", "direction", "together_with"});
  f.done();
  return r;
}

namespace {
json rates_json(const rates& r) {
  return {{"packets", r.packets}, {"bytes", r.bytes}, {"pps", r.pps}, {"bits_per_second", r.bps}};
}
json until_stop_json(const measured_part& m) {
  return {{"seconds", m.seconds}, {"sender", rates_json(m.sender)}, {"receiver", rates_json(m.receiver)}};
}

json instance_json(const instance_record& i, const run_record& r) {
  const double t0 = r.t0;
  json row = {{"instance", i.name},     {"client", i.client},       {"server", i.server},
              {"category", i.category}, {"ok", i.problems.empty()}, {"problems", i.problems}};
  if (i.result && i.result->ok) {
    const auto& t = *i.result;
    row["sender"] = {
        {"packets", t.sender.packets}, {"pps", t.sender.pps}, {"bits_per_second", t.sender.bits_per_second}};
    row["receiver"] = {
        {"packets", t.receiver.packets}, {"pps", t.receiver.pps}, {"bits_per_second", t.receiver.bits_per_second}};
    row["loss"] = {{"packets", t.loss.packets},
                   {"percent", t.loss.percent},
                   {"path", t.loss.path},
                   {"receiver_kernel_drops", drops_known(t) ? json(t.loss.receiver_kernel_drops) : json()}};
    row["start_offset_ms"] = (t.actual_start - t0) * 1e3;
    row["late"] = started_late(t, r);
    if (t.verdict) row["verdict"] = {{"limit", t.verdict->limit}, {"text", t.verdict->text}};
  } else if (i.interrupted) {
    row["interrupted"] = true;
    if (const auto m = measured_until_stop(i)) row["until_stop"] = until_stop_json(*m);
  }
  return row;
}

void add_sums(json& j, const run_summary& s) {
  j["sum"] = {{"sender", rates_json(s.sender)},
              {"receiver", rates_json(s.receiver)},
              {"loss",
               {{"packets", s.lost},
                {"percent", s.loss_percent},
                {"path", s.path_loss},
                {"receiver_kernel_drops", s.drops_known ? json(s.kernel_drops) : json()}}}};
  j["steady_state"] = nullptr;
  if (s.steady)
    j["steady_state"] = {{"start_ns", s.steady->start_ns},
                         {"end_ns", s.steady->end_ns},
                         {"slots", s.steady->slots},
                         {"sender", rates_json(s.steady->sender)},
                         {"receiver", rates_json(s.steady->receiver)}};
  j["steady_state_note"] = s.steady_note;
}
}  // namespace

json to_json(const run_summary& s) {
  json j = {{"run", s.run.id},
            {"search_trial", s.run.spec.value("search_trial", json())},
            {"test", s.run.test},
            {"role", s.run.role},
            {"topology", to_string(s.run.topo)},
            {"kind", nb::to_string(s.run.kind)},
            {"message_size", s.run.message_size},
            {"ok", s.ok},
            {"status", run_status(s)},
            {"failures", s.failures},
            {"t0", s.run.t0},
            {"instances", json::array()}};
  if (s.run.spec.contains("together_with"))  // the direction, and the run at its T0
    j["both_ways"] = {{"direction", s.run.spec.at("direction")}, {"together_with", s.run.spec.at("together_with")}};
  if (!s.run.error.empty()) j["error"] = s.run.error;
  for (const auto& i : s.run.instances) j["instances"].push_back(instance_json(i, s.run));
  if (s.run.interrupted) {  // never "ok"
    j["interrupted"] = true;
    j["measured_s"] = s.run.measured_s;
    j["until_stop"] = s.measured ? until_stop_json(*s.measured) : json();
    if (s.measured) j["until_stop"]["instances"] = s.measured_instances;
  }
  if (s.probe) j["probe"] = to_json(*s.probe);
  if (!s.ok) return j;
  if (s.rr) j["rr"] = to_json(*s.rr);
  add_sums(j, s);
  if (const auto want = requested_pps(s.run))
    j["target"] = {
        {"requested_pps_per_instance", *want}, {"met", s.target_misses.empty()}, {"misses", s.target_misses}};
  if (s.limit)
    j["limit"] = {{"limit", s.limit->limit},
                  {"text", s.limit->text},
                  {"instances", s.limit_votes},
                  {"text_of_instance", s.limit_instance},
                  {"judged_by", s.limit_by_circuit ? "circuit" : "instances"}};
  j["skew"] = skew_json(s);
  j["start_skew_ms"] = s.start_skew_ms;
  j["max_start_offset_ms"] = s.max_start_offset_ms;
  return j;
}

}  // namespace harness
