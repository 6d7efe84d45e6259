#include "harness/run/progress.hpp"

#include "core/base/text.hpp"
#include "core/base/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace harness {

std::string format_duration(double seconds) {
  const long s = std::isfinite(seconds) && seconds > 0 ? static_cast<long>(seconds) : 0;
  if (s < 3600) return fmt::format("{:02}:{:02}", s / 60, s % 60);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

std::string format_time_of_day(double epoch_s, long utc_offset_s) {
  constexpr long day = 86400;
  const long s = ((static_cast<long>(std::floor(epoch_s)) + utc_offset_s) % day + day) % day;
  return fmt::format("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

plan_progress::plan_progress(std::vector<planned_run> runs, double prior_overhead_s)
    : runs_(std::move(runs)), prior_overhead_s_(prior_overhead_s) {}

void plan_progress::start_run(std::size_t index, double now) {
  index_ = index;
  current_done_ = false;
  if (!started_) mark_ = now;
  started_ = true;
}

void plan_progress::part_done(double duration, double now, bool measured) {
  // Never negative, even for a run cut short by its deadline.
  if (measured) {
    overhead_sum_ += std::max(0.0, now - mark_ - duration);
    ++samples_;
  }
  mark_ = now;
  if (index_ < runs_.size() && !runs_[index_].search) current_done_ = true;  // a search's trial is only a part
}

double plan_progress::overhead_s() const { return samples_ > 0 ? overhead_sum_ / samples_ : prior_overhead_s_; }

plan_eta plan_progress::eta(double now) const {
  plan_eta e;
  const double o = overhead_s();
  for (std::size_t j = started_ ? index_ : 0; j < runs_.size(); ++j) {
    if (runs_[j].search) {
      e.search_ahead = e.search_ahead || !(j == index_ && started_ && current_done_);
      continue;
    }
    if (started_ && j == index_) {
      if (!current_done_) e.seconds += std::max(0.0, runs_[j].duration + o - (now - mark_));
      continue;
    }
    e.seconds += runs_[j].duration + o;
  }
  return e;
}

std::string plan_line(const std::string& plan, std::size_t index, std::size_t count, const std::string& id,
                      double elapsed_s, const plan_eta& eta, double now_epoch_s, long utc_offset_s) {
  const std::string head = fmt::format("plan {}: run {} of {} ({}), {} elapsed, ", nb::printable(plan), index + 1,
                                       count, nb::printable(id), format_duration(elapsed_s));
  // 00:00 only once nothing is left.
  const double left = std::ceil(eta.seconds);
  if (eta.search_ahead) return head + fmt::format("ETA {} + a rate search of unknown length", format_duration(left));
  return head +
         fmt::format("ETA {} (ends ~{})", format_duration(left), format_time_of_day(now_epoch_s + left, utc_offset_s));
}

live_totals live_aggregate(const std::vector<instance_progress>& instances) {
  live_totals t;
  t.instances = static_cast<int>(instances.size());
  std::size_t latest = 0;  // of every running instance; with none, of any
  bool any_running = false;
  for (const auto& i : instances) {
    const std::size_t n = i.intervals ? i.intervals->size() : 0;
    t.running += i.running;
    t.failed += i.failed;
    if (i.running) latest = any_running ? std::min(latest, n) : n;
    else if (!any_running) latest = std::max(latest, n);
    any_running = any_running || i.running;
  }
  t.known = latest > 0;
  t.interval = static_cast<int>(latest);
  for (const auto& i : instances) t.behind += i.running && (i.intervals ? i.intervals->size() : 0) <= latest;
  for (const auto& i : instances) {
    if (!i.intervals || i.intervals->size() < latest || latest == 0) continue;
    const interval_rates& r = (*i.intervals)[latest - 1];
    t.sent_pps += r.sent_pps;
    t.sent_bps += r.sent_bps;
    t.recv_pps += r.recv_pps;
    t.recv_bps += r.recv_bps;
  }
  return t;
}

std::string aggregate_line(const std::string& id, double elapsed_s, double duration_s, const live_totals& t,
                           int shown_before) {
  const std::string head = fmt::format("  {} {:5.1f}/{:g} s ({:.0f} s left)  running {}/{} failed {}  ",
                                       nb::printable(id), std::min(elapsed_s, duration_s), duration_s,
                                       std::max(0.0, duration_s - elapsed_s), t.running, t.instances, t.failed);
  if (t.known && t.interval > 0 && t.interval == shown_before)
    return head + (t.behind > 0
                       ? fmt::format("nothing new: interval {} not reported yet by {} of {} running instance(s)",
                                     t.interval + 1, t.behind, t.running)
                       : fmt::format("nothing new since interval {}", t.interval));
  auto pps = [&](double v) { return t.known ? nb::format_si(v) : std::string("—"); };
  auto mbit = [&](double v) { return t.known ? fmt::format("{:.2f}", v / 1e6) : std::string("—"); };
  return head + (t.known && t.interval > 0 ? fmt::format("interval {}: ", t.interval) : std::string()) +
         fmt::format("sent {} pps {} Mbit/s  received {} pps {} Mbit/s", pps(t.sent_pps), mbit(t.sent_bps),
                     pps(t.recv_pps), mbit(t.recv_bps));
}

std::string fit_width(const std::string& line, unsigned columns) {
  if (columns == 0 || line.size() < columns) return line;
  std::size_t n = columns - 1;
  while (n > 0 && (static_cast<unsigned char>(line[n]) & 0xC0) == 0x80) --n;  // not inside a UTF-8 sequence
  return line.substr(0, n);
}

std::string live_block::draw(const std::vector<std::string>& lines, unsigned columns) {
  std::string out = clear();
  for (const auto& l : lines) out += fit_width(l, columns) + "\n";
  drawn_ = lines.size();
  return out;
}

std::string live_block::clear() {
  std::string out;
  for (std::size_t i = 0; i < drawn_; ++i) out += "\x1b[1A\x1b[2K";  // up one line, erase it
  drawn_ = 0;
  return out;
}

}  // namespace harness
