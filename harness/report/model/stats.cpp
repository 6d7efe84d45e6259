#include "harness/report/model/stats.hpp"

#include "harness/plan/expand.hpp"

#include <fmt/format.h>
#include <boost/math/distributions/students_t.hpp>

#include <cctype>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace harness {

using nlohmann::json;

double student_t95(int dof) {
  if (dof < 1) throw std::invalid_argument(fmt::format("Student's t: {} degrees of freedom", dof));
  return boost::math::quantile(boost::math::complement(boost::math::students_t(dof), 0.025));
}

spread describe(const std::vector<double>& values) {
  spread s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / s.n;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  s.ci_low = s.ci_high = s.mean;
  if (s.n < 2) return s;
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(squares / (s.n - 1));
  const double half = student_t95(s.n - 1) * s.sd / std::sqrt(static_cast<double>(s.n));
  s.ci_low = s.mean - half;
  s.ci_high = s.mean + half;
  return s;
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The run id without its repeat number: "pps-m64-r2" -> "pps-m64", "tcp-m16-r2-a-to-b" -> "tcp-m16-a-to-b"
// (expand.cpp puts a pair's route after the repeat).
std::string common_id(const run_record& r) {
  std::string id = r.id, route, direction;
  // A bidirectional run's direction comes last ("t-m64-r2-forward", results.cpp): put it back after.
  if (const std::string d = r.spec.is_object() ? r.spec.value("direction", "") : "";
      !d.empty() && ends_with(id, "-" + d)) {
    direction = "-" + d;
    id.resize(id.size() - direction.size());
  }
  if (r.topo == topology::pairs && !r.instances.empty()) {
    const std::string tail = fmt::format("-{}-to-{}", r.instances.front().client, r.instances.front().server);
    if (ends_with(id, tail)) {
      route = tail;
      id.resize(id.size() - tail.size());
    }
  }
  const int repeat = r.spec.is_object() ? r.spec.value("repeat", 0) : 0;
  if (const std::string tag = fmt::format("-r{}", repeat); repeat > 0 && ends_with(id, tag))
    id.resize(id.size() - tag.size());
  return id + route + direction;
}

// The plan's rate with its unit apart, as every other figure: "12.5M" is "12.5 Mbit/s" (decimal suffixes
// in either case, as netload's --rate reads them).
std::string rate_words(const std::string& rate) {
  if (rate.empty() || !std::isalpha(static_cast<unsigned char>(rate.back()))) return rate + " bit/s";
  const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(rate.back())));
  return fmt::format("{} {}bit/s", rate.substr(0, rate.size() - 1),
                     c == 'k' ? 'k' : static_cast<char>(std::toupper(c)));
}

std::string load_of(const run_record& r) {
  if (!r.spec.is_object()) return "";
  if (const auto pps = r.spec.find("requested_pps"); pps != r.spec.end() && pps->is_number())
    return fmt::format("{:g} pps", pps->get<double>());
  if (const auto rate = r.spec.find("requested_rate"); rate != r.spec.end() && rate->is_string())
    return rate_words(rate->get<std::string>());
  return "";
}

std::string route_of(const run_record& r) {
  if (r.topo != topology::pairs || r.instances.empty()) return "";
  return fmt::format("{} -> {}", r.instances.front().client, r.instances.front().server);
}

repeat_group group_of(const run_record& r) {
  repeat_group g;
  g.key = common_id(r);
  g.test = r.test;
  g.role = r.role;
  g.load = load_of(r);
  g.route = route_of(r);
  g.topo = r.topo;
  g.kind = r.kind;
  g.message_size = r.message_size;
  return g;
}

void describe_group(repeat_group& g, const std::vector<run_summary>& runs) {
  std::vector<double> sent_pps, received_pps, sent_bps, received_bps, loss;
  for (auto k : g.runs) {
    const run_summary& s = runs[k];
    if (!s.ok) continue;  // a failed run has no figures: counted in `failed`, never a zero
    sent_pps.push_back(s.sender.pps);
    received_pps.push_back(s.receiver.pps);
    sent_bps.push_back(s.sender.bps);
    received_bps.push_back(s.receiver.bps);
    loss.push_back(s.loss_percent);
  }
  g.sent_pps = describe(sent_pps);
  g.received_pps = describe(received_pps);
  g.sent_bps = describe(sent_bps);
  g.received_bps = describe(received_bps);
  g.loss_percent = describe(loss);
}

}  // namespace

bool same_measurement(const repeat_group& a, const repeat_group& b) {
  // A test that kept its name but changed kind or topology measures something else.
  return a.test == b.test && a.role == b.role && a.kind == b.kind && a.topo == b.topo &&
         a.message_size == b.message_size && a.load == b.load && a.route == b.route;
}

bool is_repeated(const repeat_group& g) { return g.runs.size() >= 2; }

std::vector<repeat_group> group_repeats(const std::vector<run_summary>& runs) {
  std::vector<repeat_group> groups;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const run_record& r = runs[k].run;
    if (is_search_trial(r)) continue;
    repeat_group g = group_of(r);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const repeat_group& x) { return same_measurement(x, g); });
    if (it == groups.end()) it = groups.insert(groups.end(), std::move(g));
    it->runs.push_back(k);
    it->run_ids.push_back(r.id);
    if (!runs[k].ok) ++it->failed;
    if (r.interrupted) ++it->interrupted;
  }
  for (auto& g : groups) describe_group(g, runs);
  return groups;
}

json to_json(const spread& s) {
  // No ok run: no figures, never zeros.
  const auto figure = [&](double v) { return s.n > 0 ? json(v) : json(); };
  return {{"n", s.n},
          {"mean", figure(s.mean)},
          {"sd", figure(s.sd)},
          {"min", figure(s.min)},
          {"max", figure(s.max)},
          {"ci95_low", s.has_interval() ? json(s.ci_low) : json()},
          {"ci95_high", s.has_interval() ? json(s.ci_high) : json()}};
}

json to_json(const repeat_group& g) {
  json j = measurement_json(g);
  j.update({{"key", g.key},
            {"load", g.load.empty() ? json() : json(g.load)},
            {"route", g.route.empty() ? json() : json(g.route)},
            {"runs", g.run_ids},
            {"ok_runs", g.ok_runs()},
            {"failed", g.failed},
            {"sent_pps", to_json(g.sent_pps)},
            {"received_pps", to_json(g.received_pps)},
            {"sent_bps", to_json(g.sent_bps)},
            {"received_bps", to_json(g.received_bps)},
            {"loss_percent", to_json(g.loss_percent)}});
  return j;
}

}  // namespace harness
