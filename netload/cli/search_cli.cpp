#include "netload/cli/search_cli.hpp"

#include "core/base/cli_help.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nb::load {
namespace {

const char* const search_only_options[] = {"--loss-ratio",   "--exceed-ratio", "--final-trial-duration",
                                           "--duration-sum", "--width",        "--initial-trial-duration",
                                           "--settle",       "--max-trials",   "--max-search-time"};

bool option_given(const CLI::App& app, const std::string& name) { return app.get_option(name)->count() > 0; }

void refuse_single_test_options(const client_options& o, const CLI::App& app) {
  auto no = [](const std::string& what) { throw usage_error(fmt::format("--search: {}", what)); };
  if (o.kind != test_kind::udp_stream)
    no(fmt::format("-t {}: the search runs UDP_STREAM only (its goals are loss ratios of datagrams)",
                   to_string(o.kind)));
  if (o.peer != peer_kind::netserve) no("the search runs against netserve only (--peer netserve)");
  if (option_given(app, "-l"))
    no("-l is one test's length; a search's trials last --initial-trial-duration or --final-trial-duration "
       "seconds, as many as the goals need (--duration-sum, --width), within --max-trials and --max-search-time");
  if (option_given(app, "--pps") || option_given(app, "--rate"))
    no("--pps / --rate: the search chooses each trial's load");
  if (o.bidir) no("--bidir: a search loads one direction");
  if (o.json_stream) no("--json-stream: give --json (one object, the whole search) or neither (the table)");
  if (o.interval_s > 0) no("--interval: a search prints one line per trial");
  if (o.omit_s > 0) no("--omit: a trial's figures cover the whole trial, as the search counts its duration");
  if (o.start_at || o.start_on_stdin) no("--start-at / --start-on-stdin: each trial starts as soon as it is connected");
  if (o.local_cpu_util || o.remote_cpu_util)
    no("-c / -C: the search table has no CPU figures; run one test at the load");
  if (o.host_info) no("--host-info runs no test");
}

void check_goal_parameters(const search_options& s) {
  if (s.goals == "ndr" && s.loss_ratio)
    throw usage_error("--loss-ratio is the PDR goal's (the NDR's is 0): give --search pdr or both");
  for (const auto& g : s.search_goals()) {
    if (g.initial_trial_duration > g.final_trial_duration)
      throw usage_error(fmt::format("--initial-trial-duration {:g} s is longer than --final-trial-duration {:g} s",
                                    g.initial_trial_duration, g.final_trial_duration));
    if (g.duration_sum < g.final_trial_duration)
      throw usage_error(
          fmt::format("--duration-sum {:g} s is shorter than one final trial (--final-trial-duration {:g} s)",
                      g.duration_sum, g.final_trial_duration));
  }
}

}  // namespace

std::vector<nb::search::goal> search_options::search_goals() const {
  std::vector<nb::search::goal> out;
  if (goals == "ndr" || goals == "both") out.push_back(nb::search::ndr_goal());
  if (goals == "pdr" || goals == "both") out.push_back(nb::search::pdr_goal());
  for (auto& g : out) {
    if (loss_ratio && g.loss_ratio > 0) g.loss_ratio = *loss_ratio;
    g.exceed_ratio = exceed_ratio.value_or(g.exceed_ratio);
    g.final_trial_duration = final_trial_duration.value_or(g.final_trial_duration);
    g.duration_sum = duration_sum.value_or(g.duration_sum);
    g.width = width.value_or(g.width);
    g.initial_trial_duration = initial_trial_duration.value_or(g.initial_trial_duration);
  }
  return out;
}

void add_search_options(CLI::App& app, search_options& s) {
  using namespace nb::cli;
  const std::string group = "Rate search (RFC 9971 MLRsearch, UDP_STREAM; defaults: FD.io CSIT's goals)";
  // a list of like options, laid out by hand (clang-format would give each call four lines)
  // clang-format off
  app.add_option("--search", s.goals,
                 "Search the highest load meeting the goals: ndr (no loss), pdr (loss ratio <= --loss-ratio) or both "
                 "(the default). An unpaced trial first (MRR: its sent rate is the maximum load, its received rate the "
                 "first guess), then paced trials, each an ordinary test on a new connection to the same netserve; one "
                 "line per trial, then per goal its relevant lower and upper bound and conditional throughput. Loads "
                 "are packets per second offered by all --streams together")
      ->option_text("[GOALS]")->expected(0, 1)->group(group);
  app.add_option("--loss-ratio", s.loss_ratio, "PDR goal loss ratio: a trial losing a larger share is a high-loss trial (default 0.005)")
      ->option_text("RATIO")->check(number_in("--loss-ratio", 0, 0.999, ""))->group(group);
  app.add_option("--exceed-ratio", s.exceed_ratio,
                 "Goal exceed ratio: the share of high-loss trial time a lower bound tolerates (default 0.5)")
      ->option_text("RATIO")->check(number_in("--exceed-ratio", 0, 0.999, ""))->group(group);
  app.add_option("--final-trial-duration", s.final_trial_duration,
                 "Seconds of the trials that decide a load; shorter ones can only make it an upper bound (default 1)")
      ->option_text("SECONDS")->check(number_in("--final-trial-duration", 0.1, 3600, "seconds"))->group(group);
  app.add_option("--duration-sum", s.duration_sum, "Trial seconds at a load before it can be a lower bound (default 21)")
      ->option_text("SECONDS")->check(number_in("--duration-sum", 0.1, 36000, "seconds"))->group(group);
  app.add_option("--width", s.width, "Goal width: done when (upper - lower) / upper bound is at most this (default 0.005)")
      ->option_text("RATIO")->check(number_in("--width", 0.0001, 0.5, ""))->group(group);
  app.add_option("--initial-trial-duration", s.initial_trial_duration, "Seconds of the first trials at a new load (default 1)")
      ->option_text("SECONDS")->check(number_in("--initial-trial-duration", 0.1, 3600, "seconds"))->group(group);
  app.add_option("--settle", s.settle_s, "Pause between trials, so one trial's last packets miss the next (default 1)")
      ->option_text("SECONDS")->check(number_in("--settle", 0, 60, "seconds"))->group(group);
  app.add_option("--max-trials", s.max_trials, "The search stops after this many trials, the unpaced one included (default 200)")
      ->option_text("N")->check(whole_in("--max-trials", 2, 10000))->group(group);
  app.add_option("--max-search-time", s.max_time_s,
                 "No trial starts that would end later than this many seconds after the search began (default 900); "
                 "a search stopped by either cap says which goals it left open")
      ->option_text("SECONDS")->check(number_in("--max-search-time", 1, 86400, "seconds"))->group(group);
  // clang-format on
}

void finish_search(client_options& o, const CLI::App& app) {
  search_options& s = o.search;
  if (!option_given(app, "--search")) {
    for (const char* name : search_only_options)
      if (option_given(app, name)) throw usage_error(fmt::format("{} goes with --search", name));
    return;
  }
  if (s.goals.empty()) s.goals = "both";
  std::transform(s.goals.begin(), s.goals.end(), s.goals.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s.goals != "ndr" && s.goals != "pdr" && s.goals != "both")
    throw usage_error(fmt::format("--search '{}': the goals are ndr, pdr or both", s.goals));
  refuse_single_test_options(o, app);
  check_goal_parameters(s);
}

}  // namespace nb::load
