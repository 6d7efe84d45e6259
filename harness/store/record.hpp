#pragma once
// A results folder into the store: what `harness run` records after its reports, and what
// `harness db import` reads back from the folder's files. Both take the figures from the structs that
// make summary.json (load_raw + summarize), so the store and the reports agree by construction.
#include "harness/report/model/aggregate.hpp"
#include "harness/store/database.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace harness::store {

struct folder_content {
  std::filesystem::path path;
  std::string name, plan;  // the folder's name, and the plan's (the name without its UTC time)
  double started_utc = 0;
  nlohmann::json environment;  // environment.json ({} when missing)
  std::string plan_toml;
  std::vector<run_summary> runs;
  std::vector<nlohmann::json> searches;
  std::vector<std::string> problems;  // folder_problems(): a failed or missing run
  std::vector<std::string> skews;     // folder_skews(): a run with an instance that started late
  bool interrupted = false;
};

// The folder's files read as `harness report` reads them.
folder_content read_folder(const std::filesystem::path& dir);
// The same, with the summaries and searches a run has already computed for its reports.
folder_content read_folder(const std::filesystem::path& dir, std::vector<run_summary> runs,
                           std::vector<nlohmann::json> searches);
// A results folder's name from its path (a trailing '/' too) or from its name.
std::string folder_name(const std::string& dir_or_name);
// "<plan>-YYYYmmddTHHMMSSZ[-n]" -> plan; a name of another shape is its own plan.
std::string plan_of_folder(const std::string& folder_name);

// Records the folder in one transaction, replacing an earlier record of the same folder (by its absolute
// path: two results roots may each hold a folder of one name): a second import changes nothing, and an
// import repairs what a failed write left out.
void record(database& db, const folder_content& f);

// A stored folder, as the commands name it.
struct stored_folder {
  std::string name, path, plan, status, error;
};
// The folder a user named: by path (an argument with a '/', made absolute as recorded), else by name.
// Throws store_error when it is not stored, or when its name is stored more than once (the paths said).
stored_folder find_folder(database& db, const std::string& path_or_name);

}  // namespace harness::store
