#pragma once
// One plan, run (docs/runner.md).
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
  std::string bin_dir;  // "" = PATH
  bool live = true;
  bool allow_offset = false;  // correct a host clock off beyond the skew bound
};

struct running_server {
  std::string host;
  std::unique_ptr<nb::child_process> proc;
  std::vector<std::uint16_t> ports;
  int remote_pid = 0;
  std::string error;
  bool stop_asked = false;  // signalled, and the signal arrived
  bool finished = false;
};

struct live_instance {
  bool running = true, failed = false;
  bool armed = false;
  nb::child_process* proc = nullptr;
  std::vector<interval_rates> intervals;
};

// Between two `harness lab counters`.
nlohmann::json circuit_delta(const nlohmann::json& before, const nlohmann::json& after);

struct search_state;

class runner {
 public:
  runner(asio::io_context& io, const plan& p, run_options o);
  ~runner();
  // Empty when a stop came before the host check passed.
  asio::awaitable<std::filesystem::path> run_all();
  // Stop, then kill (docs/runner.md#stopping).
  void cancel(int sig = SIGINT);
  int stop_signal() const noexcept { return cancelled_ ? stop_signal_ : 0; }
  asio::awaitable<std::vector<host_check>> check_all();
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
  void print_live(const run_spec& r, const std::vector<live_instance>& live, double t0);
  void end_live();
  const launcher& on(const std::string& host) const { return *launchers_.at(host); }
  // With --allow-offset, T0 shifted by the host's offset.
  std::string start_line(double t0, const instance_spec& i) const;

  asio::io_context& io_;
  const plan& plan_;
  std::optional<lab::lab_spec> lab_;
  run_options opt_;
  std::filesystem::path dir_, control_dir_;
  std::map<std::string, std::unique_ptr<launcher>> launchers_;
  nlohmann::json environment_;
  asio::awaitable<bool> remote_signal(std::string host, int pid, const char* sig);
  void remote_signal_detached(const std::string& host, int pid, const char* sig);
  asio::awaitable<nb::process_outcome> run_tracked(const std::vector<std::string>& argv,
                                                   std::chrono::milliseconds limit);
  void before_kill();
  void record_failed_run(const std::filesystem::path& run_dir, nlohmann::json spec, const std::string& why);
  void record_interrupted_run(const std::filesystem::path& run_dir, nlohmann::json spec, double duration);

  process_group group_;
  std::set<nb::child_process*> servers_;
  // A signal to an ssh client does not reach the remote program: host and pid to signal there.
  std::map<nb::child_process*, std::pair<std::string, int>> remote_;
  bool cancelled_ = false;
  int remote_signals_pending_ = 0;
  asio::steady_timer pause_;  // cancel() ends it
  int stop_signal_ = 0;
  double stop_wall_s_ = 0;  // epoch seconds
  int order_ = 0;
  std::map<std::string, double> clock_offset_ms_;
  std::optional<plan_progress> progress_;
  bool terminal_ = false;
  live_block block_;
  std::string last_live_;
  int live_shown_ = 0;
  double plan_started_ = 0;
};

}  // namespace harness
