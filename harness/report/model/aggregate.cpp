#include "harness/report/model/aggregate.hpp"
#include "harness/report/model/skew.hpp"

#include "core/base/clock.hpp"
#include "core/base/units.hpp"
#include "core/sys/kernel_features.hpp"
#include "harness/report/model/circuit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace harness {

using nlohmann::json;

void check(instance_record& i) {
  i.problems.clear();
  if (!i.error.empty()) i.problems.push_back(i.error);
  if (i.timed_out) i.problems.push_back("killed at its deadline");
  if (!i.result) {
    if (i.problems.empty()) i.problems.push_back(fmt::format("no result (exit status {})", i.exit_code));
    return;
  }
  const nb::test_result& t = *i.result;
  if (!t.ok) i.problems.push_back(fmt::format("netload failed: {}", t.error));
  else if (!t.loss.reconciles) i.problems.push_back(fmt::format("counts do not reconcile: {}", t.loss.note));
  // 4: target missed (said apart); 128 + a signal: the user's stop, which the run says.
  else if (i.exit_code != 0 && !(i.exit_code == 4 && t.target && !t.target->met) &&
           !(t.interrupted && i.exit_code > 128))
    i.problems.push_back(fmt::format("netload exit status {}", i.exit_code));
}

namespace {

// A late sender was not sending through the slots its lateness covers and ran on past the end: the window
// leaves both out. Seconds after T0, 0 when none.
double latest_late_start_s(const run_record& r) {
  double late_s = 0;
  for (const auto& l : late_starts(r)) late_s = std::max(late_s, l.offset_ms / 1e3);
  return late_s;
}

// docs/reports.md#from-instances-to-a-run: [first, last) sample indexes, or nothing with `note` saying why.
std::optional<std::pair<std::size_t, std::size_t>> steady_window(const run_record& r, std::string& note) {
  std::size_t slots = std::numeric_limits<std::size_t>::max();
  for (const auto& i : r.instances) slots = std::min(slots, i.result->intervals.size());
  const double late_s = latest_late_start_s(r);
  const auto first = static_cast<std::size_t>(std::ceil(std::max(r.warmup, late_s) / r.interval - 1e-9));
  std::size_t last = late_s > 0 && slots > 0 ? slots - 1 : slots;
  const auto full_ns = static_cast<std::int64_t>(r.interval * 0.9e9);
  for (const auto& i : r.instances)
    if (last > first + 1 && last == slots &&
        i.result->intervals[last - 1].end_ns - i.result->intervals[last - 1].start_ns < full_ns)
      --last;
  // A missing sample is a zero that is no measurement: trimmed off the end, fatal inside the window.
  const auto complete = [&](std::size_t k) {
    return std::all_of(r.instances.begin(), r.instances.end(),
                       [&](const auto& i) { return i.result->intervals[k].complete; });
  };
  while (last > first && !complete(last - 1)) --last;
  if (last <= first) {
    note = late_s > 0 ? fmt::format(
                            "no complete per-second sample with every instance sending: after the {} s "
                            "warm-up and the latest start, {:.1f} ms after T0, less the last sample (a "
                            "late sender runs on past it)",
                            r.warmup, late_s * 1e3)
                      : fmt::format("no complete per-second sample after the {} s warm-up", r.warmup);
    return std::nullopt;
  }
  for (std::size_t k = first; k < last; ++k)
    if (!complete(k)) {
      note = fmt::format("sample {} is missing one side's count", k);
      return std::nullopt;
    }
  // One index must be one wall-clock second on every instance.
  const auto bound_ns = static_cast<std::int64_t>(r.skew_bound_ms * 1e6);
  for (std::size_t k = first; k < last; ++k) {
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    for (const auto& i : r.instances) {
      lo = std::min(lo, i.result->intervals[k].start_ns);
      hi = std::max(hi, i.result->intervals[k].start_ns);
    }
    if (hi - lo > bound_ns) {
      note = fmt::format("sample {} starts {:.1f} ms apart across instances: not aligned on wall clock", k,
                         static_cast<double>(hi - lo) / 1e6);
      return std::nullopt;
    }
  }
  return std::pair{first, last};
}

std::optional<steady_state> steady(const run_record& r, std::string& note) {
  if (r.instances.empty()) return std::nullopt;
  auto window = steady_window(r, note);
  if (!window) return std::nullopt;
  const auto [first, last] = *window;
  steady_state s;
  s.start_ns = std::numeric_limits<std::int64_t>::min();
  s.end_ns = std::numeric_limits<std::int64_t>::max();
  for (const auto& i : r.instances) {
    const auto& iv = i.result->intervals;
    std::int64_t span = 0;
    rates snd, rcv;
    for (std::size_t k = first; k < last; ++k) {
      snd.packets += iv[k].sent_packets;
      snd.bytes += iv[k].sent_bytes;
      rcv.packets += iv[k].received_packets;
      rcv.bytes += iv[k].received_bytes;
      span += iv[k].end_ns - iv[k].start_ns;
    }
    s.start_ns = std::max(s.start_ns, iv[first].start_ns);
    s.end_ns = std::min(s.end_ns, iv[last - 1].end_ns);
    const double secs = nb::ns_to_s(span);
    s.sender.packets += snd.packets;
    s.sender.bytes += snd.bytes;
    s.sender.pps += nb::per_second(snd.packets, secs);
    s.sender.bps += nb::bits_per_second(snd.bytes, secs);
    s.receiver.packets += rcv.packets;
    s.receiver.bytes += rcv.bytes;
    s.receiver.pps += nb::per_second(rcv.packets, secs);
    s.receiver.bps += nb::bits_per_second(rcv.bytes, secs);
  }
  s.slots = static_cast<int>(last - first);
  return s;
}

void add(rates& sum, const nb::flow_figures& f) {
  sum.packets += f.packets;
  sum.bytes += f.bytes;
  sum.pps += f.pps;
  sum.bps += f.bits_per_second;
}

// Missed by more than 1 %: the figures are true but the run offered less than asked, never silently.
void check_targets(run_summary& s) {
  const auto want = requested_pps(s.run);
  if (!want || *want <= 0) return;
  for (const auto& i : s.run.instances) {
    if (!i.result || !i.result->ok) continue;
    const double got = i.result->sender.pps, error = (got - *want) / *want * 100;
    // TCP's rate is a ceiling, judged by netload.
    const bool ceiling = i.result->target && i.result->target->ceiling;
    if (ceiling ? !i.result->target->met : std::abs(error) > 1.0)
      s.target_misses.push_back(
          fmt::format("{}: sent {:.1f} of {:.1f} pps requested ({:+.2f} %): target missed", i.name, got, *want, error));
  }
}

// Ties: the first instance's.
void judge_run(run_summary& s) {
  std::map<std::string, int> votes;
  const nb::limit_verdict* first = nullptr;
  for (const auto& i : s.run.instances)
    if (i.result && i.result->verdict) {
      ++votes[i.result->verdict->limit];
      if (!first) first = &*i.result->verdict;
    }
  if (!first) return;
  std::string best = first->limit;
  for (const auto& [limit, n] : votes)
    if (n > votes[best]) best = limit;
  for (const auto& i : s.run.instances)
    if (i.result && i.result->verdict && i.result->verdict->limit == best) {
      s.limit = *i.result->verdict;
      s.limit_instance = i.name;
      break;
    }
  s.limit_votes = votes[best];
}

}  // namespace

std::optional<double> requested_pps(const run_record& r) {
  const auto pps = r.spec.find("requested_pps");
  if (pps != r.spec.end() && pps->is_number()) return pps->get<double>();
  const auto rate = r.spec.find("requested_rate");
  if (rate != r.spec.end() && rate->is_string() && r.message_size > 0)
    return nb::parse_rate(rate->get<std::string>()) / (8.0 * r.message_size);
  return std::nullopt;
}

bool is_search_trial(const run_record& r) {
  const auto t = r.spec.find("search_trial");
  return t != r.spec.end() && t->is_object();
}

namespace {

// With --allow-offset, each host's instants back on the harness's clock: netload's by the client's offset,
// each side's datagrams by its own host's.
void to_harness_clock(nb::test_result& t, std::int64_t client_ns, std::int64_t server_ns) {
  const std::int64_t sender_ns = t.reverse ? server_ns : client_ns, receiver_ns = t.reverse ? client_ns : server_ns;
  auto shift = [](std::int64_t& instant, std::int64_t by) {
    if (instant) instant -= by;
  };
  if (t.requested_start != 0) t.requested_start -= nb::ns_to_s(client_ns);
  if (t.actual_start != 0) t.actual_start -= nb::ns_to_s(sender_ns);
  shift(t.sender.first_ns, sender_ns);
  shift(t.sender.last_ns, sender_ns);
  shift(t.receiver.first_ns, receiver_ns);
  shift(t.receiver.last_ns, receiver_ns);
  for (auto& i : t.intervals) {
    shift(i.start_ns, client_ns);
    shift(i.end_ns, client_ns);
  }
}

void correct_clocks(run_record& r) {
  if (!r.spec.is_object() || !r.spec.contains("clock_offsets_ms")) return;
  const json& offsets = r.spec["clock_offsets_ms"];
  auto offset_ns = [&](const std::string& host) { return static_cast<std::int64_t>(offsets.value(host, 0.0) * 1e6); };
  for (auto& i : r.instances)
    if (i.result) to_harness_clock(*i.result, offset_ns(i.client), offset_ns(i.server));
}

}  // namespace

std::string drops_text(std::uint64_t drops, bool known) { return known ? std::to_string(drops) : "unknown"; }
std::string path_text(std::uint64_t path, bool known) {
  return known ? std::to_string(path) : fmt::format("<= {}", path);
}
bool drops_known(const nb::test_result& t) { return !nb::drops_unknown(t.receiver.batching); }

run_summary summarize(run_record r) {
  run_summary s;
  correct_clocks(r);
  if (!r.error.empty()) s.failures.push_back(fmt::format("run: {}", r.error));
  for (auto& i : r.instances) {
    check(i);
    // Half the test late: its figures hardly overlap the others'.
    if (const double late_ms = i.result ? (i.result->actual_start - r.t0) * 1e3 : 0;
        i.problems.empty() && r.duration > 0 && late_ms > r.duration * 500)
      i.problems.push_back(fmt::format(
          "started {:.1f} ms after T0, more than half the test's {:g} s: its figures do not overlap the others'",
          late_ms, r.duration));
    for (const auto& p : i.problems) s.failures.push_back(fmt::format("{}: {}", i.name, p));
  }
  s.ok = s.failures.empty() && !r.instances.empty() && !r.interrupted;
  if (r.interrupted) s.measured = sum_until_stop(r.instances, s.measured_instances);
  if (s.ok) {
    double earliest = std::numeric_limits<double>::max(), latest = 0;
    for (const auto& i : r.instances) {
      const nb::test_result& t = *i.result;
      add(s.sender, t.sender);
      add(s.receiver, t.receiver);
      s.lost += t.loss.packets;
      s.path_loss += t.loss.path;
      s.kernel_drops += t.loss.receiver_kernel_drops;
      s.drops_known = s.drops_known && drops_known(t);
      earliest = std::min(earliest, t.actual_start);
      latest = std::max(latest, t.actual_start);
    }
    s.loss_percent = s.sender.packets ? 100.0 * static_cast<double>(s.lost) / static_cast<double>(s.sender.packets) : 0;
    s.start_skew_ms = (latest - earliest) * 1e3;
    s.max_start_offset_ms = (latest - r.t0) * 1e3;
    s.steady = steady(r, s.steady_note);
    s.late = late_starts(r);
  }
  s.probe = summarize_probe(r);
  if (s.ok) s.rr = summarize_rr(r);
  s.run = std::move(r);
  if (s.ok) {
    check_targets(s);
    judge_run(s);
    judge_by_circuit(s);
  }
  return s;
}

std::pair<std::string, std::string> data_route(const run_record& r, const instance_record& i) {
  const bool back = r.spec.is_object() && r.spec.value("direction", "") == "reverse";
  return back ? std::pair{i.server, i.client} : std::pair{i.client, i.server};
}

}  // namespace harness
