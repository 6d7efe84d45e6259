// harness: runs a TOML plan of netserve / netload instances across hosts and writes the results folder.
#include "harness/app.hpp"
#include "harness/lab/lab.hpp"
#include "harness/plan.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  // netload instances read their start instant from a pipe of ours; one that died must give EPIPE to
  // that write, not kill the harness. A handler, not SIG_IGN: an ignored signal would stay ignored in
  // every program we start, a handled one is reset by exec.
  std::signal(SIGPIPE, [](int) {});
  // `harness lab ...` has its own commands and options: everything after "lab" goes to it untouched.
  if (argc > 1 && std::string(argv[1]) == "lab") return lab::lab_main(std::vector<std::string>(argv + 2, argv + argc));
  CLI::App app{"harness: run a netserve / netload test plan and report it"};
  app.require_subcommand(1);
  harness::run_request req;
  req.self_exe = "/proc/self/exe";
  auto* run = app.add_subcommand("run", "Run a plan (default: the embedded configs/loopback.toml)");
  run->add_option("plan", req.plan_path, "Plan file (TOML)");
  run->add_flag("--dry-run", req.dry_run, "Print every host's commands; run nothing, open no socket");
  run->add_option("--results", req.results_root, "Folder under which results/<plan>-<UTC time>/ is made");
  run->add_option("--bin-dir", req.bin_dir, "Where this machine's netserve and netload are");
  run->add_flag("!--no-live", req.live, "No per-second progress lines");
  std::string report_dir;
  auto* report = app.add_subcommand("report", "Rebuild summary.json, summary.csv and report.md from raw/");
  report->add_option("dir", report_dir, "A results folder")->required();
  app.add_subcommand("lab", "Network-namespace lab: up FILE, down FILE, status [FILE], counters FILE")->allow_extras();
  CLI11_PARSE(app, argc, argv);
  try {
    if (*run) return harness::run_plan(req);
    return harness::rebuild_reports(report_dir);
  } catch (const std::exception& e) {
    fmt::print(stderr, "harness: {}\n", e.what());
    return 1;
  }
}
