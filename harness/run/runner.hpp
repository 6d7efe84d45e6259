#pragma once
// One plan, run: preflight every host, then run by run: start the servers and wait for their ready
// lines, pick T0, start every netload at T0, follow them live, collect, write raw/ at once, rebuild the
// reports; servers are stopped after each run, also after an error or a signal.
//
// The runner class is split by role:
//   runner.cpp              the plan run after run, the user's stop (cancel), what each run records
//   runner_host_checks.cpp  the preflight: every host checked before the first run (and `harness check`)
//   runner_instances.cpp    one run's processes: netserves up and ready, netload instances started
//                           together and followed live, servers stopped
//   run_search.cpp          a search run: trial after trial, each chosen by MLRsearch (core/search), each
//                           run measured as a trial (search_trials.hpp)
#include "harness/lab/lab.hpp"
#include "harness/launch/launcher.hpp"
#include "harness/launch/process_group.hpp"
#include "harness/plan/expand.hpp"
#include "harness/plan/plan.hpp"
#include "harness/process/process.hpp"
#include "harness/records/host_check.hpp"
#include "harness/report/model/aggregate.hpp"
#include "harness/run/progress.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace harness {

namespace asio = boost::asio;

struct run_options {
  std::filesystem::path results_root = "results";
  std::string bin_dir;        // where this machine's netserve / netload are ("" = PATH)
  bool live = true;           // the per-second progress line on stderr
  bool allow_offset = false;  // a host clock off by more than the skew bound: correct its start, not refuse
};

// A started netserve: its process, and the ports its ready line gave.
struct running_server {
  std::string host;
  std::unique_ptr<nb::child_process> proc;
  std::vector<std::uint16_t> ports;
  int remote_pid = 0;
  std::string error;        // why it did not become ready
  bool stop_asked = false;  // stop_servers signalled it (here, or there over ssh) and the signal arrived
  bool finished = false;    // reaped already
};

// What the start barrier and the live display know about one instance while it runs.
struct live_instance {
  bool running = true, failed = false;
  bool armed = false;                     // connected, waiting for its start instant
  nb::child_process* proc = nullptr;      // while it runs: where its start instant goes
  std::vector<interval_rates> intervals;  // every interval it reported, in order
};

// The emulated circuit's own counts between two snapshots (`harness lab counters`): packets its
// packet-rate limit and its bit-rate shaper dropped, UDP datagrams the hosts' kernels delivered.
nlohmann::json circuit_delta(const nlohmann::json& before, const nlohmann::json& after);

struct search_state;  // search_trials.hpp

class runner {
 public:
  runner(asio::io_context& io, const plan& p, run_options o);
  ~runner();
  // Runs every run of the plan; returns the results folder, made once the host check passed: empty when
  // a stop came before (nothing was written). An error before then says that nothing was written.
  asio::awaitable<std::filesystem::path> run_all();
  // From the signal handler (`sig`: the signal): the first call asks every process to stop (SIGTERM
  // here, `kill -TERM PID` over ssh; a stopped netload ends its test and keeps its figures) and, if any is
  // still there 5 s later, kills them all; a second call kills them at once. No run starts after it: the
  // run under way is recorded as interrupted with the seconds measured, and run_all returns the folder.
  void cancel(int sig = SIGINT);
  // The signal that stopped the plan, 0 when none did.
  int stop_signal() const noexcept { return cancelled_ ? stop_signal_ : 0; }
  // Every host the plan uses, checked (host_check.hpp), each judged; recorded for environment.json.
  asio::awaitable<std::vector<host_check>> check_all();
  // `harness check`: check_all, then the ssh master connections closed.
  asio::awaitable<std::vector<host_check>> check_only();

 private:
  asio::awaitable<void> check_into(host_check& out, std::string name, std::set<std::string> programs,
                                   std::set<std::string> peers);
  asio::awaitable<host_check> check_host(const std::string& name, const std::set<std::string>& programs,
                                         const std::set<std::string>& peers);
  asio::awaitable<void> ask_host(host_check& c, const std::set<std::string>& peers);
  asio::awaitable<std::optional<clock_offset>> read_clock(nb::child_process& p,
                                                          std::chrono::steady_clock::time_point deadline);
  asio::awaitable<void> say_version(host_check& c, const std::string& program);
  void check_local_address(host_check& c);
  nlohmann::json circuit_counters() const;
  asio::awaitable<void> preflight();
  asio::awaitable<void> run_one(const run_spec& r);
  asio::awaitable<void> run_search(const run_spec& r);
  asio::awaitable<std::optional<run_summary>> run_search_trial(const run_spec& trial);
  asio::awaitable<void> run_latency_steps(const run_spec& r, search_state& st, int& k, std::function<void()> write);
  asio::awaitable<void> settle_pause();
  asio::awaitable<void> start_servers(const run_spec& r, std::vector<running_server>& servers);
  asio::awaitable<void> stop_servers(std::vector<running_server>& servers);
  asio::awaitable<void> run_instances(const run_spec& r, const std::vector<running_server>& servers,
                                      nlohmann::json& spec, const std::filesystem::path& run_dir);
  asio::awaitable<double> start_together(const run_spec& r, std::vector<live_instance>& live, asio::steady_timer& wake);
  asio::awaitable<void> run_instance(const run_spec& r, std::size_t index, const running_server& server,
                                     const std::filesystem::path& run_dir, live_instance& live,
                                     asio::steady_timer& wake);
  asio::awaitable<void> close_launchers();
  void record_command(const std::string& host, const std::vector<std::string>& argv);
  void write_environment();
  void open_results_dir();
  std::exception_ptr nothing_written(std::exception_ptr failure) const;
  // The per-second live view: a plain line per second, or on a terminal the plan's line and the
  // aggregate's, redrawn in place (progress.hpp); end_live leaves the run's last aggregate as a plain line.
  void print_live(const run_spec& r, const std::vector<live_instance>& live, double t0);
  void end_live();
  const launcher& on(const std::string& host) const { return *launchers_.at(host); }
  // What an instance's netload reads on stdin: T0; with --allow-offset T0 on its host's clock (T0 + the
  // host's offset) and on its server's, which starts and samples the server's side by it.
  std::string start_line(double t0, const instance_spec& i) const;

  asio::io_context& io_;
  const plan& plan_;
  std::optional<lab::lab_spec> lab_;  // the plan's emulated circuit, when it has one
  run_options opt_;
  std::filesystem::path dir_, control_dir_;
  std::map<std::string, std::unique_ptr<launcher>> launchers_;
  nlohmann::json environment_;
  // `kill -SIG PID` on the host; true when it did (the process was there).
  asio::awaitable<bool> remote_signal(std::string host, int pid, const char* sig);
  void remote_signal_detached(const std::string& host, int pid, const char* sig);
  // A command of the preflight: stopped with the others on cancel, and cancel ends the preflight.
  asio::awaitable<nb::process_outcome> run_tracked(const std::vector<std::string>& argv,
                                                   std::chrono::milliseconds limit);
  // When the group escalates to SIGKILL: said, and remote programs killed where they run.
  void before_kill();
  // A run that failed (its netserve did not start, ...): recorded in raw/<run>/run.json with why.
  void record_failed_run(const std::filesystem::path& run_dir, nlohmann::json spec, const std::string& why);
  // A run the user stopped: raw/<run>/run.json says so, with the seconds measured from its T0.
  void record_interrupted_run(const std::filesystem::path& run_dir, nlohmann::json spec, double duration);

  process_group group_;                   // every child alive now, for cancel()
  std::set<nb::child_process*> servers_;  // the netserves among them: stopped after their instances
  // ssh-launched processes whose local ssh client still runs (so the remote one is there): host, remote
  // pid. A signal to the ssh client does not reach them; it is sent there.
  std::map<nb::child_process*, std::pair<std::string, int>> remote_;
  bool cancelled_ = false;
  int remote_signals_pending_ = 0;  // remote `kill` commands under way
  asio::steady_timer pause_;        // the settle pause between runs, which cancel() ends
  int stop_signal_ = 0;
  double stop_wall_s_ = 0;                         // when the stop came (epoch seconds)
  int order_ = 0;                                  // of the runs in raw/, as they ran
  std::map<std::string, double> clock_offset_ms_;  // per host, as check_all measured it
  // The live view: the plan's progress, and on a terminal the block redrawn in place.
  std::optional<plan_progress> progress_;
  bool terminal_ = false;  // the live view goes to a terminal (stderr; see the constructor)
  live_block block_;
  std::string last_live_;  // the aggregate line last shown
  int live_shown_ = 0;     // the interval whose rates it showed (0: none yet)
  double plan_started_ = 0;
};

}  // namespace harness
