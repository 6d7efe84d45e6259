#pragma once
// The results folder: written once, read back as untrusted input (docs/reports.md#the-results-folder).
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

// Unwritable results end the plan, where a failed run does not.
struct write_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::filesystem::path make_results_dir(const std::filesystem::path& root, const std::string& plan_name);
// Never a half-written file, and no PATH.tmp left behind.
void write_file(const std::filesystem::path& path, const std::string& text);
void write_json(const std::filesystem::path& path, const nlohmann::json& j);

// A long run's record at the shortest interval is a few tens of MiB.
inline constexpr std::size_t max_results_file_bytes = std::size_t{64} << 20;
// nullopt when missing.
std::optional<std::string> read_results_file(const std::filesystem::path& dir, const std::filesystem::path& relative,
                                             std::size_t max_bytes = max_results_file_bytes);
// Nesting bounded; non-JSON is an error naming the file.
nlohmann::json read_results_json(const std::filesystem::path& dir, const std::filesystem::path& relative);
// Empty when missing.
std::string read_plan_copy(const std::filesystem::path& dir);
// {} when missing or not an object.
nlohmann::json read_environment(const std::filesystem::path& dir);

run_record load_run(const std::filesystem::path& run_dir);
// In the order they ran.
std::vector<nlohmann::json> load_searches(const std::filesystem::path& dir);
// In the order they ran; instances in planned order.
std::vector<run_record> load_raw(const std::filesystem::path& dir);
// One line each: a planned run missing from raw/, a failed run's first reason, an empty raw/.
std::vector<std::string> folder_problems(const std::filesystem::path& dir, const std::vector<run_summary>& runs);
// One sentence when a signal stopped the plan; empty otherwise.
std::string interrupted_banner(const std::filesystem::path& dir);
// `stopped_only`: none unless a signal stopped the plan (runs still to come have no raw/ either).
std::vector<unrun> runs_not_run(const std::filesystem::path& dir, bool stopped_only = false);
// After every run.
std::vector<run_summary> write_reports(const std::filesystem::path& dir);
}  // namespace harness
