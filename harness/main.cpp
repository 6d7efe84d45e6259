// harness: runs a TOML plan of netserve / netload instances across hosts and writes the results folder.
#include "core/base/cli_help.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/base/version.hpp"
#include "harness/app/app.hpp"
#include "harness/lab/lab.hpp"
#include "harness/launch/deploy.hpp"
#include "harness/plan/plan.hpp"
#include "harness/store/trend/commands.hpp"
#include "harness/watch/metrics_server.hpp"
#include "harness/watch/watch.hpp"

#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using nb::cli::option;

// CLI11's Range lets NaN through: every comparison with it is false.
const CLI::Validator finite(
    [](std::string& v) {
      return std::isfinite(std::strtod(v.c_str(), nullptr)) ? std::string() : "not a finite number";
    },
    "", "finite");

// A regression is a drop of at least this much: 100 % would need a measurement of zero, and NaN or a
// negative figure would judge nothing or everything. The same rule for run, watch and history.
const CLI::Validator min_change_check(
    [](std::string& v) {
      char* end = nullptr;
      const double pct = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !std::isfinite(pct) || pct < 0 || pct >= 100)
        return fmt::format("'{}' is not a percentage from 0 to below 100", v);
      return std::string();
    },
    "", "min_change");

// Runs a measurement is judged against: a whole number, at least one, and not so many that the
// judgement is over the plan's whole history by accident.
const CLI::Validator baseline_runs_check(
    [](std::string& v) {
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 1 || n > 1000)
        return fmt::format("'{}' is not a whole number from 1 to 1000", v);
      return std::string();
    },
    "", "baseline_runs");

// The options of a run, shared by `harness run` and `harness watch`, which runs the plan the same way.
void add_run_options(CLI::App& cmd, harness::run_request& req) {
  option(cmd, "--results", req.results_root, "Folder under which results/<plan>-<UTC time>/ is made", "DIR");
  option(cmd, "--bin-dir", req.bin_dir, "Where this machine's netserve and netload are", "DIR");
  cmd.add_flag("!--no-live", req.live, "No per-second progress lines");
  cmd.add_flag("--allow-offset", req.allow_offset,
               "Run although a host's clock is off by more than the start-skew bound: correct its start instant");
  option(cmd, "--duration", req.overrides.duration,
         "Seconds per test instead of the plan's (every test; a rate search's final trials)", "S")
      ->check(finite)
      ->check(CLI::Range(0.1, 86400.0));
  option(cmd, "--repeats", req.overrides.repeats, "Run each test this many times instead of the plan's", "N")
      ->check(CLI::Range(1, 1000));
  option(cmd, "--only", req.overrides.only, "Run only this test of the plan (again, or a comma list, for more)", "TEST")
      ->allow_extra_args(false);
  option(cmd, "--db", req.db, "Results database (default: RESULTS/netbench.sqlite)", "PATH");
  auto* no_db = cmd.add_flag("!--no-db", req.record, "Record nothing in the results database");
  cmd.add_flag("--fail-on-regression", req.fail_on_regression,
               "Exit 4 when a measurement fell below its baseline (the last runs of the plan, or `db baseline`)")
      ->excludes(no_db);
  option(cmd, "--baseline-runs", req.baseline_runs, "Runs of the plan a measurement is judged against", "N")
      ->check(baseline_runs_check);
  option(cmd, "--min-change", req.min_change_percent,
         "Smallest drop (% of the baseline's mean) that counts as a regression", "PCT")
      ->check(min_change_check);
}

// --every: "2h30m" into seconds, or CLI11's one-line error saying what is wrong.
const CLI::Validator period_check(
    [](std::string& v) {
      try {
        v = std::to_string(nb::parse_period(v).count());
        return std::string();
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
    },
    "PERIOD", "period");

// --linger: a period as --every takes it, or 0 for none.
const CLI::Validator linger_check(
    [](std::string& v) {
      if (v == "0" || v == "0s") {
        v = "0";
        return std::string();
      }
      return period_check(v);
    },
    "PERIOD", "linger");

// --listen: an IP address and a port, said wrong on the command line rather than after the plan loads.
const CLI::Validator listen_check(
    [](std::string& v) {
      try {
        harness::watch::parse_listen(v);
        return std::string();
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
    },
    "ADDR:PORT", "listen");

// What the command line fills in, one field per option; CLI11 holds references to these, so the
// struct stays where main() made it.
struct command_line {
  harness::run_request req;  // run, watch and check
  harness::watch::watch_request watch_req;
  std::int64_t every_s = 0;
  std::int64_t linger_s = 60;  // Prometheus' default scrape interval
  std::string report_dir;
  std::vector<std::filesystem::path> compare_dirs;
  std::filesystem::path compare_out = ".";
  harness::store::history_request hist;
  std::filesystem::path db_path = std::filesystem::path("results") / harness::store::default_db_name;
  std::vector<std::filesystem::path> import_dirs;
  std::string baseline_folder;
  harness::deploy_request dep;
  CLI::App *run = nullptr, *watch = nullptr, *check = nullptr, *report = nullptr, *compare = nullptr;
  CLI::App *history = nullptr, *db_import = nullptr, *db_baseline = nullptr, *deploy = nullptr;
  CLI::Option* hist_html = nullptr;
};

void add_run_and_watch(CLI::App& app, command_line& c) {
  auto& req = c.req;
  c.run = app.add_subcommand("run", "Run a plan (default: the embedded configs/loopback.toml)");
  option(*c.run, "plan", req.plan_path, "Plan file (TOML)", "PLAN");
  c.run->add_flag("--dry-run", req.dry_run, "Print every host's commands; run nothing, open no socket");
  add_run_options(*c.run, req);
  auto* watch = c.watch =
      app.add_subcommand("watch", "Run a plan again and again, each run recorded and judged; metrics for Prometheus");
  option(*watch, "plan", req.plan_path, "Plan file (TOML)", "PLAN")->required();
  add_run_options(*watch, req);
  option(*watch, "--every", c.every_s, "Start a run this long after the previous one started (30s, 15m, 1h, 2h30m)",
         "PERIOD")
      ->transform(period_check)
      ->required();
  option(*watch, "--count", c.watch_req.count, "Stop after this many runs (default: until Ctrl-C or SIGTERM)", "N")
      ->check(CLI::Range(1, 1000000));
  option(*watch, "--listen", c.watch_req.listen,
         "Serve the last run's figures as OpenMetrics at http://ADDR:PORT/metrics (port 0: any free port)", "ADDR:PORT")
      ->check(listen_check);
  option(*watch, "--linger", c.linger_s,
         "With --listen and --count: serve the last run's figures this long after it before ending, so that a "
         "scraper reads them (default 1m, Prometheus' default scrape interval; 0: not at all)",
         "PERIOD")
      ->transform(linger_check);
}

void add_check_report_compare(CLI::App& app, command_line& c) {
  auto& req = c.req;
  auto* check = c.check =
      app.add_subcommand("check", "Check every host of a plan: reachable, versions, clock offset, kernel");
  option(*check, "plan", req.plan_path, "Plan file (TOML)", "PLAN");
  option(*check, "--bin-dir", req.bin_dir, "Where this machine's netserve and netload are", "DIR");
  check->add_flag("--allow-offset", req.allow_offset, "Judge as `run --allow-offset` would: an offset is a note");
  option(*check, "--only", req.overrides.only, "Check only the hosts of this test (again, or a comma list, for more)",
         "TEST")
      ->allow_extra_args(false);
  c.report = app.add_subcommand("report", "Rebuild summary.json, summary.csv, report.md and report.html from raw/");
  option(*c.report, "dir", c.report_dir, "A results folder", "DIR")->required();
  auto* compare = c.compare = app.add_subcommand(
      "compare", "Compare results folders: each later one against the first (received pps and Mbit/s, 95 % intervals)");
  option(*compare, "dirs", c.compare_dirs, "Results folders; the first is the baseline (A)", "DIR_A DIR_B [DIR...]")
      ->required()
      ->expected(2, -1);
  option(*compare, "--out", c.compare_out,
         "Where compare.md, compare.json and compare.html go (default: the current folder)", "DIR");
  compare->footer(
      "A verdict says better or worse only when the 95 % confidence interval of the difference of the means (Welch's t)\n"
      "lies wholly above or below zero: each side needs at least two ok runs (repeats = N in the plan). Measurements are\n"
      "matched by test, role, message size, load and route; ones on one side only are listed, not an error.\n"
      "Exit status: 0 (whatever the verdicts); 1 a folder cannot be read; 2 bad command line.");
}

void add_history(CLI::App& app, command_line& c) {
  auto& hist = c.hist;
  auto* history = c.history = app.add_subcommand("history", "Each measurement over time, from the results database");
  option(*history, "--db", hist.db, "Results database (default: results/netbench.sqlite)", "PATH");
  option(*history, "--plan", hist.plan, "Only this plan", "NAME");
  option(*history, "--test", hist.test, "Only this test", "NAME");
  option(*history, "--since", hist.since, "Only results folders started on or after (UTC)", "YYYY-MM-DD[THH:MM[:SS]]");
  auto* hist_json = history->add_flag("--json", hist.json, "JSON on stdout");
  auto* hist_csv = history->add_flag("--csv", hist.csv, "CSV on stdout, one row per point")->excludes(hist_json);
  c.hist_html = history
                    ->add_option("--html", hist.html,
                                 "A page with one chart per measurement (level shifts and regressions marked); "
                                 "default PATH: history.html")
                    ->expected(0, 1)
                    ->excludes(hist_json, hist_csv)
                    ->option_text("[PATH]");
  option(*history, "--baseline-runs", hist.regress.baseline_runs,
         "--html: each folder judged against up to N before it (default 5)", "N")
      ->check(baseline_runs_check);
  option(*history, "--min-change", hist.regress.min_change_percent,
         "--html: a regression drops at least this % (default 5)", "PCT")
      ->check(min_change_check);
}

void add_db_deploy_lab(CLI::App& app, command_line& c) {
  auto* db = app.add_subcommand("db", "The results database: import results folders, mark a baseline");
  db->require_subcommand(1);
  c.db_import =
      db->add_subcommand("import", "Record results folders (again: replaces their records); rebuilds a store");
  option(*c.db_import, "dirs", c.import_dirs, "Results folders", "DIR...")->required();
  option(*c.db_import, "--db", c.db_path, "Results database (default: results/netbench.sqlite)", "PATH");
  c.db_baseline = db->add_subcommand("baseline", "Judge the plan's later runs against this results folder");
  option(*c.db_baseline, "run", c.baseline_folder, "A results folder (its name or path)", "RUN")->required();
  option(*c.db_baseline, "--db", c.db_path, "Results database (default: results/netbench.sqlite)", "PATH");
  auto& dep = c.dep;
  c.deploy = app.add_subcommand("deploy", "Copy netload and netserve to the bin_dir of the plan's ssh hosts");
  option(*c.deploy, "plan", dep.plan_path, "Plan file (TOML)", "PLAN")->required();
  option(*c.deploy, "--from", dep.from, "Where the programs to copy are (default: this tree's build/static/bin)",
         "DIR");
  c.deploy->add_flag("--dry-run", dep.dry_run, "Print every host's commands; run nothing");
  app.add_subcommand("lab", "Network-namespace lab: up FILE, down FILE, status [FILE], counters FILE")->allow_extras();
}

void describe(CLI::App& app) {
  nb::cli::set_help(app, "harness", "harness COMMAND [OPTIONS]   (harness COMMAND --help for its options)");
  app.set_version_flag("-V,--version", nb::version, "Print the version and exit")->group("Other");
  app.footer(
      "Examples:\n"
      "  harness run                                  the embedded plan (configs/loopback.toml)\n"
      "  harness run configs/express-connect-lab.toml --dry-run   each host's commands; nothing runs\n"
      "  harness run plan.toml --results /tmp/r       run a plan, results under /tmp/r\n"
      "  harness run plan.toml --duration 5 --only pps   only the test pps, 5 s a run (plan.toml in the results says so)\n"
      "  harness watch plan.toml --every 15m --listen 127.0.0.1:9464   run it every 15 min; metrics for Prometheus\n"
      "  harness check plan.toml                      every host: reachable, versions, clock offset, kernel, MTU\n"
      "  harness report results/loopback-20261130T015027Z   rebuild the reports from raw/\n"
      "  harness compare results/A results/B          B against A: received pps and Mbit/s, better / worse / no difference\n"
      "  harness history --plan loopback --json       each measurement over the runs recorded in results/netbench.sqlite\n"
      "  harness history --html                       one chart per measurement, level shifts marked: ./history.html\n"
      "  harness db import results/*/                 (re)build the results database from results folders\n"
      "  harness deploy plan.toml                     netload and netserve to the plan's ssh hosts\n"
      "  harness deploy plan.toml --from DIR --dry-run   the commands it would run; nothing runs\n"
      "  harness lab up configs/express-connect-lab.toml   the namespace lab (harness lab --help)\n"
      "\nExit status: 0 every run ok (check: every host ok); 3 a run failed or is missing (each named on stderr); 4 (run\n"
      "--fail-on-regression) a measurement fell below its baseline; 5 (run, report) every run has its figures, but an\n"
      "instance started later than T0 + skew_bound_ms: the run is summed, recorded and marked skewed (each named on\n"
      "stderr); 1 an error (plan, a host check error, ssh, a file that cannot be read or written); 2 bad command line;\n"
      "130 / 143 / 129 run stopped by SIGINT / SIGTERM / SIGHUP (no run starts after it; what was measured is reported).\n"
      "watch: 0 after --count runs all ok; else the last run's non-zero status (3, 4, 5, 1 a run could not start);\n"
      "128 + the signal when stopped (between runs at once; inside one, the run is stopped and recorded).\n"
      "deploy: 0 every host current or copied; 1 a host failed (each named on stderr) or another error.");
}

constexpr int parsed = -1;

// CLI11's parse, with its errors said in one line; `parsed` when a command is to run.
int parse(CLI::App& app, int argc, char** argv) {
  // CLI11 would say only that a command is required.
  const auto subs = app.get_subcommands({});
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(subs.begin(), subs.end(), [&](const CLI::App* sub) { return sub->check_name(argv[1]); })) {
    fmt::print(stderr,
               "harness: unknown command '{}' (run, watch, check, report, compare, history, db, deploy or lab)\n",
               argv[1]);
    return nb::cli::usage_status;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Error& e) {
    // An unknown option is named first (report), whatever it left missing.
    if (dynamic_cast<const CLI::RequiredError*>(&e) && app.get_subcommands().empty() &&
        !nb::cli::find_unknown_option(app)) {
      fmt::print(stderr,
                 "harness: a command is required (run, watch, check, report, compare, history, db, deploy or lab)\n");
      return nb::cli::usage_status;
    }
    return nb::cli::report(app, e, "harness");
  }
  return parsed;
}

int dispatch(command_line& c) {
  if (*c.run) return harness::run_plan(c.req);
  if (*c.watch) {
    c.watch_req.run = c.req;
    c.watch_req.every = std::chrono::seconds(c.every_s);
    c.watch_req.linger = std::chrono::seconds(c.linger_s);
    return harness::watch::watch_plan(c.watch_req);
  }
  if (*c.check) return harness::check_plan(c.req);
  if (*c.deploy) return harness::deploy(c.dep);
  if (*c.compare) return harness::compare_results(c.compare_dirs, c.compare_out);
  if (*c.history) {
    if (*c.hist_html && c.hist.html.empty()) c.hist.html = "history.html";
    return harness::store::history(c.hist);
  }
  if (*c.db_import) return harness::store::db_import(c.db_path, c.import_dirs);
  if (*c.db_baseline) return harness::store::db_baseline(c.db_path, c.baseline_folder);
  return harness::rebuild_reports(c.report_dir);
}

}  // namespace

int main(int argc, char** argv) {
  // netload instances read their start instant from a pipe of ours; one that died must give EPIPE to
  // that write, not kill the harness. A handler, not SIG_IGN: an ignored signal would stay ignored in
  // every program we start, a handled one is reset by exec.
  std::signal(SIGPIPE, [](int) {});
  // `harness lab ...` has its own commands and options: everything after "lab" goes to it untouched.
  if (argc > 1 && std::string(argv[1]) == "lab") return lab::lab_main(std::vector<std::string>(argv + 2, argv + argc));
  CLI::App app{"harness: run a netserve / netload test plan and report it"};
  app.require_subcommand(1);
  command_line c;
  c.req.self_exe = "/proc/self/exe";
  c.dep.self_exe = "/proc/self/exe";
  add_run_and_watch(app, c);
  add_check_report_compare(app, c);
  add_history(app, c);
  add_db_deploy_lab(app, c);
  describe(app);
  if (const int status = parse(app, argc, argv); status != parsed) return status;
  try {
    return dispatch(c);
  } catch (const std::exception& e) {
    // A message may quote a name from a plan or a file, or a program's words: one line, nothing raw. One
    // that holds no raw control character (its names escaped where it was made) is not escaped twice.
    const std::string_view what = e.what();
    const bool raw = std::any_of(what.begin(), what.end(),
                                 [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; });
    fmt::print(stderr, "harness: {}\n", raw ? nb::printable_bounded(what, 2000) : std::string(what));
    return 1;
  }
}
