#pragma once
// The results folder: results/<plan>-<UTC time>/ with plan.toml, environment.json, raw/<run>/run.json and
// raw/<run>/<instance>.json (written the moment the instance ends), summary.json, summary.csv, report.md.
// Reports are always rebuilt from raw/, during a run and by `harness report DIR`, so both agree.
#include "harness/aggregate.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace harness {

std::filesystem::path make_results_dir(const std::filesystem::path& root, const std::string& plan_name);
void write_file(const std::filesystem::path& path, const std::string& text);  // whole file, flushed, or throws
void write_json(const std::filesystem::path& path, const nlohmann::json& j);

// One run folder raw/<run>/: run.json and its instances' records.
run_record load_run(const std::filesystem::path& run_dir);
// Every search under raw/ (raw/<run>/search.json), in the order they ran.
std::vector<nlohmann::json> load_searches(const std::filesystem::path& dir);
// Every run under raw/, in the order they ran; instance records in their planned order.
std::vector<run_record> load_raw(const std::filesystem::path& dir);
// summary.json, summary.csv and report.md from raw/; returns the summaries.
std::vector<run_summary> write_reports(const std::filesystem::path& dir);

}  // namespace harness
