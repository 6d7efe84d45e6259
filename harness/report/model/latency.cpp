#include "harness/report/model/latency.hpp"

#include "harness/report/model/aggregate.hpp"

#include <fmt/format.h>

namespace harness {
namespace {

using nlohmann::json;

// Nothing when the interval has no buckets.
std::optional<nb::latency_histogram> interval_latency(const nb::interval_figures& i) {
  if (!i.latency || !i.latency->contains("histogram")) return std::nullopt;
  try {
    return nb::latency_histogram::from_json(i.latency->at("histogram"));
  } catch (const std::exception&) {
    return std::nullopt;  // the result's own histogram was checked on read
  }
}

json histogram_json(const nb::latency_histogram& h) {
  json j = h.summary_json();
  j["histogram"] = h.to_json();
  return j;
}

}  // namespace

std::optional<probe_summary> summarize_probe(const run_record& r) {
  if (!r.probe) return std::nullopt;
  probe_summary p;
  const json& spec = r.spec.at("probe");
  p.pps = spec.value("pps", 0.0);
  p.idle_s = spec.value("idle", 0.0);
  p.size = spec.value("size", 0u);
  const instance_record& i = *r.probe;
  if (!i.error.empty() || !i.result) {
    p.error = i.error.empty() ? "no result" : i.error;
    return p;
  }
  const nb::test_result& t = *i.result;
  if (!t.ok || !t.rr || !t.loss.reconciles) {
    p.error = !t.ok ? t.error : !t.rr ? "not a request/response result" : "counts do not reconcile: " + t.loss.note;
    return p;
  }
  p.transactions = t.rr->transactions;
  p.timeouts = t.rr->timeouts;
  const double duration = r.spec.value("duration", 0.0);
  const auto t0_ns = static_cast<std::int64_t>(r.t0 * 1e9);
  const auto steady_from = t0_ns + static_cast<std::int64_t>(r.warmup * 1e9);
  const auto load_end = t0_ns + static_cast<std::int64_t>(duration * 1e9);
  // Epoch seconds in doubles: a boundary on T0 may be a fraction of a microsecond either side.
  constexpr std::int64_t slack_ns = 1'000'000;
  for (const nb::interval_figures& iv : t.intervals) {
    auto h = interval_latency(iv);
    if (!h) continue;
    p.series.push_back({static_cast<double>(iv.end_ns - t0_ns) / 1e9, static_cast<double>(h->percentile_ns(50)) / 1e3,
                        static_cast<double>(h->percentile_ns(99)) / 1e3, static_cast<double>(h->max_ns()) / 1e3,
                        h->count()});
    if (iv.end_ns <= t0_ns + slack_ns) p.idle.merge(*h);
    else if (iv.start_ns >= steady_from - slack_ns && iv.end_ns <= load_end + slack_ns) p.loaded.merge(*h);
  }
  return p;
}

std::optional<rr_summary> summarize_rr(const run_record& r) {
  if (!nb::is_rr(r.kind)) return std::nullopt;
  rr_summary s;
  for (const instance_record& i : r.instances) {
    if (!i.result || !i.result->ok || !i.result->rr) return std::nullopt;
    const nb::rr_figures& rr = *i.result->rr;
    s.latency.merge(rr.latency);
    s.transactions += rr.transactions;
    s.timeouts += rr.timeouts;
    s.transactions_per_second += rr.transactions_per_second;
  }
  return s;
}

std::string latency_words(const nb::latency_histogram& h) {
  if (h.count() == 0) return "no round trip";
  auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e3; };
  return fmt::format("p50 {:.1f} µs, p90 {:.1f} µs, p99 {:.1f} µs, p99.9 {:.1f} µs, max {:.1f} µs ({} round trips)",
                     us(h.percentile_ns(50)), us(h.percentile_ns(90)), us(h.percentile_ns(99)),
                     us(h.percentile_ns(99.9)), us(h.max_ns()), h.count());
}

json to_json(const probe_summary& p) {
  json series = json::array();
  for (const latency_point& l : p.series)
    series.push_back(
        {{"t_s", l.t_s}, {"p50_us", l.p50_us}, {"p99_us", l.p99_us}, {"max_us", l.max_us}, {"count", l.count}});
  json j = {{"pps", p.pps},           {"size", p.size},   {"idle_s", p.idle_s}, {"transactions", p.transactions},
            {"timeouts", p.timeouts}, {"error", p.error}, {"series", series}};
  j["idle"] = histogram_json(p.idle);
  j["loaded"] = histogram_json(p.loaded);
  return j;
}

json to_json(const rr_summary& s) {
  json j = {{"transactions", s.transactions},
            {"transactions_per_second", s.transactions_per_second},
            {"timeouts", s.timeouts}};
  j["latency"] = histogram_json(s.latency);
  return j;
}

}  // namespace harness
