#pragma once
// The results folder: results/<plan>-<UTC time>/ with plan.toml, environment.json, raw/<run>/run.json and
// raw/<run>/<instance>.json (written the moment the instance ends), summary.json, summary.csv, report.md.
// Reports are always rebuilt from raw/, during a run and by `harness report DIR`, so both agree.
#include "harness/report/model/aggregate.hpp"
#include "harness/report/report.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness {

// A results file could not be written (a full disk, a file size limit): the run cannot keep what it
// measures, so this ends the plan, where a failed run does not.
struct write_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::filesystem::path make_results_dir(const std::filesystem::path& root, const std::string& plan_name);
// The whole file under its name, or write_error naming the file and the system's reason; never a
// half-written file, and no PATH.tmp left behind.
void write_file(const std::filesystem::path& path, const std::string& text);
void write_json(const std::filesystem::path& path, const nlohmann::json& j);

// A results folder is read as untrusted input (it may come from another host): each file beneath the
// folder (no symlink out of it), a regular file (no FIFO, no device), and at most this large. A JSON
// record of a long run at the shortest interval is a few tens of MiB; plan.toml is a plan
// (max_toml_bytes, 1 MiB).
inline constexpr std::size_t max_results_file_bytes = std::size_t{64} << 20;
// The text of `relative` in the results folder `dir` (nb::read_file_beneath); nullopt when missing.
std::optional<std::string> read_results_file(const std::filesystem::path& dir, const std::filesystem::path& relative,
                                             std::size_t max_bytes = max_results_file_bytes);
// The same as JSON, nesting bounded; a file that is not JSON is an error naming it.
nlohmann::json read_results_json(const std::filesystem::path& dir, const std::filesystem::path& relative);
// The folder's copy of its plan (plan.toml, at most max_toml_bytes as any plan); empty when missing.
std::string read_plan_copy(const std::filesystem::path& dir);
// environment.json as an object ({} when missing, or when it holds no object).
nlohmann::json read_environment(const std::filesystem::path& dir);

// One run folder raw/<run>/: run.json and its instances' records, each beneath the run's folder.
run_record load_run(const std::filesystem::path& run_dir);
// Every search under raw/ (raw/<run>/search.json), in the order they ran.
std::vector<nlohmann::json> load_searches(const std::filesystem::path& dir);
// Every run under raw/, in the order they ran; instance records in their planned order.
std::vector<run_record> load_raw(const std::filesystem::path& dir);
// What is wrong with a results folder, one line each: a run of the plan with no folder in raw/
// (environment.json lists the planned runs), a failed run with its first reason, raw/ with no run.
std::vector<std::string> folder_problems(const std::filesystem::path& dir, const std::vector<run_summary>& runs);
// The plan was stopped by a signal (environment.json "interrupted"): what the reports say about it, in
// one sentence; empty when it was not.
std::string interrupted_banner(const std::filesystem::path& dir);
// The runs of the plan (environment.json "planned_runs") with nothing in raw/ (report.hpp's unrun).
// `stopped_only`: only when a signal stopped the plan (else none: while the plan runs, the runs still to
// come have nothing in raw/ either).
std::vector<unrun> runs_not_run(const std::filesystem::path& dir, bool stopped_only = false);
// summary.json, summary.csv and report.md from raw/; returns the summaries. After every run.
std::vector<run_summary> write_reports(const std::filesystem::path& dir);
}  // namespace harness
