#pragma once
// The live view's pure parts (docs/runner.md#the-live-view): no clock, no file descriptor.
#include <cstddef>
#include <string>
#include <vector>

namespace harness {

// Negative counts as 0.
std::string format_duration(double seconds);
std::string format_time_of_day(double epoch_s, long utc_offset_s);

struct planned_run {
  double duration = 0;
  bool search = false;
};

struct plan_eta {
  double seconds = 0;  // this run's rest included
  bool search_ahead = false;
};

class plan_progress {
 public:
  plan_progress(std::vector<planned_run> runs, double prior_overhead_s);

  void start_run(std::size_t index, double now);
  // `measured` false: no sample.
  void part_done(double duration, double now, bool measured);

  std::size_t index() const { return index_; }
  std::size_t count() const { return runs_.size(); }
  double overhead_s() const;
  plan_eta eta(double now) const;

 private:
  std::vector<planned_run> runs_;
  double prior_overhead_s_;
  std::size_t index_ = 0;
  bool started_ = false;
  bool current_done_ = false;
  double mark_ = 0;
  double overhead_sum_ = 0;
  int samples_ = 0;
};

// "plan NAME: run I of N (ID), mm:ss elapsed, ETA mm:ss (ends ~HH:MM:SS)".
std::string plan_line(const std::string& plan, std::size_t index, std::size_t count, const std::string& id,
                      double elapsed_s, const plan_eta& eta, double now_epoch_s, long utc_offset_s);

struct live_totals {
  int running = 0, instances = 0, failed = 0;
  double sent_pps = 0, sent_bps = 0, recv_pps = 0, recv_bps = 0;
  bool known = true;  // false: not known yet, shown as "—"
  int interval = 0;
  int behind = 0;  // still short of the next interval
};

struct interval_rates {
  double sent_pps = 0, sent_bps = 0, recv_pps = 0, recv_bps = 0;
};
struct instance_progress {
  bool running = false, failed = false;
  const std::vector<interval_rates>* intervals = nullptr;
};
// Rates stay unknown, never 0, until every running instance has reported an interval.
live_totals live_aggregate(const std::vector<instance_progress>& instances);
// With nothing newer than `shown_before`, says who is behind.
std::string aggregate_line(const std::string& id, double elapsed_s, double duration_s, const live_totals& t,
                           int shown_before = 0);

// Under `columns` at a UTF-8 boundary: a full-width line wraps on some terminals (0 = unknown).
std::string fit_width(const std::string& line, unsigned columns);

// Output after clear() lands where the block was.
class live_block {
 public:
  std::string draw(const std::vector<std::string>& lines, unsigned columns);
  std::string clear();
  void forget() { drawn_ = 0; }
  bool shown() const { return drawn_ > 0; }

 private:
  std::size_t drawn_ = 0;
};

}  // namespace harness
