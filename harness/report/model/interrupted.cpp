#include "harness/report/model/aggregate.hpp"

#include "core/base/clock.hpp"
#include "core/base/units.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness {

using nlohmann::json;

nb::interval_figures sample_interval(const json& sample) {
  // netload's interval line: its fields and "type": "interval".
  if (!sample.is_object() || !sample.contains("type") || sample.at("type") != "interval")
    throw std::runtime_error("sample: not a netload interval line (\"type\": \"interval\")");
  json figures = sample;
  figures.erase("type");
  return nb::interval_from_json(figures);
}

std::vector<nb::interval_figures> intervals_of(const instance_record& i) {
  if (i.result && !i.result->intervals.empty()) return i.result->intervals;
  std::vector<nb::interval_figures> out;
  for (const json& j : i.samples) out.push_back(sample_interval(j));
  return out;
}

std::optional<measured_part> measured_until_stop(const instance_record& i) {
  measured_part m;
  auto rated = [](std::uint64_t packets, std::uint64_t bytes, double secs) {
    return rates{packets, bytes, nb::per_second(packets, secs), nb::bits_per_second(bytes, secs)};
  };
  if (i.result && (i.result->sender.packets || i.result->receiver.packets) &&
      std::max(i.result->sender.seconds, i.result->receiver.seconds) > 0) {
    const nb::test_result& t = *i.result;
    m.seconds = std::max(t.sender.seconds, t.receiver.seconds);
    m.sender = rated(t.sender.packets, t.sender.bytes, m.seconds);
    m.receiver = rated(t.receiver.packets, t.receiver.bytes, m.seconds);
    return m;
  }
  std::int64_t span_ns = 0;
  std::uint64_t sent = 0, sent_bytes = 0, received = 0, received_bytes = 0;
  for (const auto& iv : intervals_of(i)) {
    span_ns += std::max<std::int64_t>(iv.end_ns - iv.start_ns, 0);
    sent += iv.sent_packets;
    sent_bytes += iv.sent_bytes;
    received += iv.received_packets;
    received_bytes += iv.received_bytes;
  }
  if (span_ns <= 0 || (sent == 0 && received == 0)) return std::nullopt;
  m.seconds = nb::ns_to_s(span_ns);
  m.sender = rated(sent, sent_bytes, m.seconds);
  m.receiver = rated(received, received_bytes, m.seconds);
  return m;
}

std::string run_state(const run_summary& s) {
  if (s.ok) return s.skewed() ? "SKEWED" : "";
  if (!s.run.interrupted) return "FAILED";
  return s.run.duration > 0
             ? fmt::format("INTERRUPTED after {:.1f} s of the run's {:g} s", s.run.measured_s, s.run.duration)
             : fmt::format("INTERRUPTED after {:.1f} s", s.run.measured_s);
}

std::optional<measured_part> sum_until_stop(std::vector<instance_record>& instances, int& counted) {
  measured_part sum;
  counted = 0;
  for (auto& i : instances) {
    i.interrupted = true;
    const auto m = measured_until_stop(i);
    if (!m) continue;
    ++counted;
    for (auto [to, from] : {std::pair{&sum.sender, &m->sender}, std::pair{&sum.receiver, &m->receiver}}) {
      to->packets += from->packets;
      to->bytes += from->bytes;
      to->pps += from->pps;
      to->bps += from->bps;
    }
    sum.seconds = std::max(sum.seconds, m->seconds);
  }
  if (!counted) return std::nullopt;
  return sum;
}

}  // namespace harness
