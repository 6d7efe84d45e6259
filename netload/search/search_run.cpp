#include "netload/search/search_run.hpp"

#include "core/search/shortfall_rule.hpp"
#include "core/sys/socket.hpp"
#include "netload/native/client.hpp"
#include "netload/native/outcome.hpp"
#include "netload/native/user_stop.hpp"
#include "netload/search/search_report.hpp"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>

namespace nb::load {
namespace {

using steady = std::chrono::steady_clock;

// The lowest load the search may try, as a share of the maximum (CSIT's minimum is of that order of a
// line-rate port); a floor of one datagram a second keeps a trial from sending nothing.
constexpr double min_load_share = 1e-3;

// The user's stop for the whole search. Each trial's own user_stop (run_to_end) ends the trial under way
// and keeps its figures; this set is registered for as long as the search runs, so a signal between
// trials (the settle pause, the search's own work) is caught too, never the default action that would
// lose the table. asio delivers a signal to every registered set, this one too while a trial's
// io_context is the one reading it.
class search_stop {
 public:
  search_stop() : signals_(io_, SIGINT, SIGTERM) {
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (!ec) signal_ = sig;
    });
  }
  bool stopped() { return signal() != 0; }
  // The signal that stopped the search, 0 for none yet.
  int signal() {
    io_.restart();
    io_.poll();
    return signal_;
  }
  // The settle pause: `seconds`, or until the stop.
  void pause(double seconds) {
    if (stopped() || seconds <= 0) return;
    io_.restart();
    io_.run_for(std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(seconds)));
  }
  std::string name() const { return signal_ == SIGTERM ? "SIGTERM" : signal_ ? "SIGINT" : ""; }

 private:
  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  int signal_ = 0;
};

// One trial: an ordinary test at `load` packets per second (0: unpaced) for `duration` seconds, on its
// own io_context and control connection, as a single netload runs one.
search_trial run_trial(const client_options& o, search_stop& stop, int n, double load, double duration,
                       std::string reason) {
  client_options t = o;
  t.search = {};
  t.pps = load;
  t.rate_bps = 0;
  t.duration_s = duration;
  t.json = false;
  boost::asio::io_context io;
  search_trial out;
  out.n = n;
  out.reason = std::move(reason);
  client_events events;
  // A stop between the search's last look and this trial's own handler ends the trial before it sends.
  events.stop_before = [&stop] { return stop.signal(); };
  out.result = run_test(io, t, std::move(events));
  const test_result& r = out.result;
  nb::search::trial_result& m = out.measured;
  m.intended_load = load;
  m.duration = duration;
  m.ran = r.ok;
  m.sent = r.ok ? r.sender.packets : 0;
  m.received = r.ok ? r.receiver.packets : 0;
  m.load_limited = r.ok && !r.interrupted && load > 0 && offered_short(m.sent, load, duration);
  return out;
}

class search_session {
 public:
  explicit search_session(const client_options& o) : o_(o), goals_(o.search.search_goals()), began_(steady::now()) {}
  int run();

 private:
  void show(const search_trial& t) const { show(search_trial_line(t, goals_, search_ ? &*search_ : nullptr)); }
  void show(const std::string& text) const {
    fmt::print(o_.json ? stderr : stdout, "{}", text);
    std::fflush(o_.json ? stderr : stdout);
  }
  double elapsed() const { return std::chrono::duration<double>(steady::now() - began_).count(); }
  bool interrupted() const { return !trials_.empty() && trials_.back().interrupted(); }
  bool run_mrr();
  void run_trials();
  // The settle pause, then the trial `next` asks for; nothing when a cap or the user's stop comes first,
  // or the trial was interrupted.
  const search_trial* attempt(const nb::search::trial_request& next);
  // The cap that forbids the next trial of `duration` seconds, or "".
  std::string cap_before(double duration) const;
  int finish();

  const client_options& o_;
  std::vector<nb::search::goal> goals_;
  steady::time_point began_;
  search_stop stop_;
  std::vector<search_trial> trials_;  // the MRR trial first
  std::optional<nb::search::mlr_search> search_;
  nb::search::shortfall_rule shortfall_;
  search_end end_;
};

bool search_session::run_mrr() {
  if (stop_.stopped()) return false;  // a stop before the first trial: nothing is sent
  double longest = 0;
  for (const auto& g : goals_) longest = std::max(longest, g.final_trial_duration);
  const search_trial& mrr = trials_.emplace_back(run_trial(o_, stop_, 0, 0, longest, "MRR"));
  if (mrr.interrupted()) return false;
  show(mrr);
  if (!mrr.result.ok) {
    end_.cap = fmt::format("the unpaced trial failed: {}", mrr.result.error);
    return false;
  }
  const double max_load = mrr.result.sender.pps, guess = mrr.result.receiver.pps;
  if (max_load < 1) {
    end_.cap = "the unpaced trial sent nothing: no load to search";
    return false;
  }
  const double min_load = std::min(max_load, std::max(1.0, max_load * min_load_share));
  search_.emplace(goals_, min_load, max_load, std::clamp(guess, min_load, max_load));
  return true;
}

std::string search_session::cap_before(double duration) const {
  const search_options& s = o_.search;
  if (trials_.size() >= s.max_trials) return fmt::format("--max-trials {} reached", s.max_trials);
  if (elapsed() + s.settle_s + duration > s.max_time_s)
    return fmt::format("--max-search-time {:g} s: a {:g}-s trial would end after it", s.max_time_s, duration);
  return {};
}

const search_trial* search_session::attempt(const nb::search::trial_request& next) {
  if (stop_.stopped()) return nullptr;
  if (auto cap = cap_before(next.duration); !cap.empty()) {
    end_.cap = std::move(cap);
    return nullptr;
  }
  stop_.pause(o_.search.settle_s);      // so the last trial's tail does not reach this one
  if (stop_.stopped()) return nullptr;  // no trial starts after the user's stop
  const int n = static_cast<int>(trials_.size());
  const search_trial& t = trials_.emplace_back(run_trial(o_, stop_, n, next.intended_load, next.duration, next.reason));
  return t.interrupted() ? nullptr : &t;  // cut short: its figures are printed, the search learns nothing from them
}

void search_session::run_trials() {
  // The search's own bound on its trials (it names it in every goal it leaves open); ours counts every
  // trial netload ran, and the time.
  search_->set_trial_limit(o_.search.max_trials - 1);
  while (auto next = search_->next()) {
    const search_trial* t = attempt(*next);
    // A first shortfall at a load (core/search/shortfall_rule.hpp: a sender the host starved for a while,
    // as on the wire-like path, 72 401 of 210 513 due right after 181 043 of 181 476): once more, and the
    // search is told the second.
    while (t && shortfall_.run_again(t->measured)) {
      trials_.back().repeated = true;
      show(trials_.back());
      t = attempt(*next);
    }
    if (!t) return;
    search_->record(t->measured);
    show(*t);
  }
  // Ended by itself: by its goals, or by its trial limit or trials that failed to run, which it names.
  if (search_->trials().size() >= o_.search.max_trials - 1)
    end_.cap = fmt::format("--max-trials {} reached", o_.search.max_trials);
  else if (!trials_.back().measured.ran)
    end_.cap = fmt::format("trials failed to run, the last: {}", trials_.back().result.error);
}

int search_session::run() {
  show(search_heading(o_, goals_));
  if (run_mrr()) run_trials();
  stop_.stopped();  // a stop during the last trial's end exchange counts too
  end_.signal = interrupted() ? trials_.back().result.interrupted->signal : stop_.name();
  end_.elapsed_s = elapsed();
  end_.repeated =
      static_cast<int>(std::count_if(trials_.begin(), trials_.end(), [](const search_trial& t) { return t.repeated; }));
  return finish();
}

int search_session::finish() {
  const nb::search::mlr_search* s = search_ ? &*search_ : nullptr;
  if (interrupted()) show(trials_.back());
  if (o_.json) fmt::print("{}\n", search_json(o_, s, trials_, end_).dump(2));
  else fmt::print("{}", search_results_text(o_, s, end_));
  std::fflush(stdout);
  if (!end_.signal.empty()) return interrupted_status(end_.signal);
  if (!end_.cap.empty()) {
    fmt::print(stderr, "netload: the search did not finish: {}\n", end_.cap);
    return failed;
  }
  return ok;
}

}  // namespace

bool offered_short(std::uint64_t sent, double load, double duration) {
  return static_cast<double>(sent) + 1 < load * duration * (1 - target_tolerance_percent / 100);
}

int run_search(const client_options& o) {
  // -T: as for one test, the whole program where it was asked.
  if (o.local_cpu >= 0 && !nb::pin_thread_to_cpu(o.local_cpu))
    fmt::print(stderr, "netload: cannot run on CPU {} (-T): not pinned\n", o.local_cpu);
  search_session session(o);
  return session.run();
}

}  // namespace nb::load
