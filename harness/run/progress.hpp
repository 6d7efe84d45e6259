#pragma once
// The live view's pure parts: where the plan is and when it should end (plan_progress), the lines it
// shows, and the terminal block redrawn in place (live_block). The runner feeds them times and writes
// what they return to stderr; nothing here reads a clock or touches a file descriptor.
#include <cstddef>
#include <string>
#include <vector>

namespace harness {

// "mm:ss" under an hour, "h:mm:ss" from one hour on; negative counts as 0, fractions are dropped.
std::string format_duration(double seconds);
// The time of day of a Unix instant as "HH:MM:SS", shifted by `utc_offset_s` (local time: tm_gmtoff).
std::string format_time_of_day(double epoch_s, long utc_offset_s);

// What one planned run is known to take: its test duration, or, for a rate search, nothing (its trial
// count depends on what it measures).
struct planned_run {
  double duration = 0;
  bool search = false;
};

struct plan_eta {
  double seconds = 0;         // the runs of known length still ahead, the current one's rest included
  bool search_ahead = false;  // a rate search is running or still to come: its time is not in `seconds`
};

// The plan's position and its ETA. A run costs its duration plus an overhead: the settle pause, starting
// the servers, the start barrier, the lead, the drain and writing the reports. The overhead is measured:
// each part that ran (a run, or a search's trial) gives one sample, its wall time since the previous
// part ended minus its duration, and the ETA uses their average; before the first sample, `prior_overhead`.
class plan_progress {
 public:
  plan_progress(std::vector<planned_run> runs, double prior_overhead_s);

  void start_run(std::size_t index, double now);  // run `index` of the plan begins (before its settle pause)
  // A run (or a trial) ended at `now`; `measured` false when it failed before it ran (no sample then).
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
  bool current_done_ = false;  // the current run (not a search) ended; the next has not begun
  double mark_ = 0;            // when the previous part ended (or the first run began)
  double overhead_sum_ = 0;
  int samples_ = 0;
};

// "plan NAME: run I of N (ID), mm:ss elapsed, ETA mm:ss (ends ~HH:MM:SS)"; with a search ahead the ETA
// counts only the runs of known length, and says so.
std::string plan_line(const std::string& plan, std::size_t index, std::size_t count, const std::string& id,
                      double elapsed_s, const plan_eta& eta, double now_epoch_s, long utc_offset_s);

// The per-second aggregate of one run, as the plain log lines have always shown it.
struct live_totals {
  int running = 0, instances = 0, failed = 0;
  double sent_pps = 0, sent_bps = 0, recv_pps = 0, recv_bps = 0;
  bool known = true;  // false: the rates are not known yet, and the line shows "—" for them
  int interval = 0;   // which interval the rates are of (1 = the first), when from live_aggregate
  int behind = 0;     // running instances that have not reported the interval after it
};

// One interval of one instance, as its netload reported it.
struct interval_rates {
  double sent_pps = 0, sent_bps = 0, recv_pps = 0, recv_bps = 0;
};
// What the live view knows of one instance: whether it runs, whether it failed, every interval so far.
struct instance_progress {
  bool running = false, failed = false;
  const std::vector<interval_rates>* intervals = nullptr;
};
// The rates of the latest interval every running instance has reported, summed over every instance that
// reported it (one that ended counts for what it sent until then). An instance's report of an interval
// comes a little after the interval ends: until each running instance has reported one, the rates are
// not known (`known` false), never 0.
live_totals live_aggregate(const std::vector<instance_progress>& instances);
// The line names the interval its rates are of. `shown_before`: the interval the run's previous line
// showed (0: none); when no newer one has come from every instance since, the line says that nothing
// new arrived and who is behind, rather than print the same figures again.
std::string aggregate_line(const std::string& id, double elapsed_s, double duration_s, const live_totals& t,
                           int shown_before = 0);

// At most `columns - 1` characters (a full-width line would make some terminals wrap, and the block's
// cursor-up count would then be wrong); 0 columns = unknown, left whole. Cut at a UTF-8 boundary.
std::string fit_width(const std::string& line, unsigned columns);

// Lines redrawn in place on a terminal, ANSI only (cursor up, erase line): draw() returns what erases
// the previous drawing and writes the new lines, clear() what only erases it. Each line ends with a
// newline, so the cursor rests at the start of the line below the block and anything printed after a
// clear() lands where the block was.
class live_block {
 public:
  std::string draw(const std::vector<std::string>& lines, unsigned columns);
  std::string clear();
  // The block stays on the screen as it is, as scrollback (after a signal message printed below it).
  void forget() { drawn_ = 0; }
  bool shown() const { return drawn_ > 0; }

 private:
  std::size_t drawn_ = 0;
};

}  // namespace harness
