#include "harness/report/model/skew.hpp"

#include <fmt/format.h>

namespace harness {

bool started_late(const nb::test_result& t, const run_record& r) {
  return t.ok && (t.actual_start - r.t0) * 1e3 > r.skew_bound_ms;
}

std::vector<late_start> late_starts(const run_record& r) {
  std::vector<late_start> out;
  for (const auto& i : r.instances)
    if (i.result && started_late(*i.result, r)) out.push_back({i.name, (i.result->actual_start - r.t0) * 1e3});
  return out;
}

std::string run_status(const run_summary& s) {
  if (s.run.interrupted) return "interrupted";
  if (!s.ok) return "failed";
  return s.skewed() ? "skewed" : "ok";
}

std::string late_words(const run_summary& s) {
  std::string out;
  for (const auto& l : s.late)
    out += out.empty() ? fmt::format("{} started {:.1f} ms after T0", l.instance, l.offset_ms)
                       : fmt::format(", {} {:.1f} ms", l.instance, l.offset_ms);
  return out.empty() ? out : fmt::format("{} (start-skew bound {:g} ms)", out, s.run.skew_bound_ms);
}

nlohmann::json skew_json(const run_summary& s) {
  nlohmann::json late = nlohmann::json::array();
  for (const auto& l : s.late) late.push_back({{"instance", l.instance}, {"start_offset_ms", l.offset_ms}});
  return {{"bound_ms", s.run.skew_bound_ms}, {"late", late}};
}

std::vector<std::string> folder_skews(const std::vector<run_summary>& runs) {
  std::vector<std::string> out;
  for (const auto& s : runs)
    if (s.skewed()) out.push_back(fmt::format("run {} skewed: {}", s.run.id, late_words(s)));
  return out;
}

}  // namespace harness
