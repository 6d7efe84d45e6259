#pragma once
// `harness compare A B [C ...]`: later folders against the first, measurement by measurement; better or
// worse only when Welch's 95 % interval excludes zero (docs/reports.md#repeats-and-harness-compare).
#include "harness/report/model/stats.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace harness {

enum class verdict {
  better,         // B - A wholly above zero
  worse,          // wholly below zero
  no_difference,  // what the repeats show is no difference
  one_run,        // a side has < 2 ok runs: no interval
  no_ok_run,      // nothing to compare
  mixed,          // a row only: pps and Mbit/s judged differently
};
std::string to_string(verdict v);

// B's mean minus A's.
struct difference {
  double diff = 0;
  bool has_interval = false;  // both sides have >= 2 ok runs
  double low = 0, high = 0;   // equal to diff without one
  double dof = 0;             // before rounding down for the t table
  verdict judged = verdict::one_run;
};
difference welch_difference(const spread& a, const spread& b);
// %; NaN when a's mean is 0 or a side has no ok run.
double change_percent(const spread& a, const spread& b);

struct compare_row {
  repeat_group a, b;
  difference pps, bps;                    // of the run sums' received figures
  double pps_change = 0, bps_change = 0;  // %
  verdict judged = verdict::one_run;      // theirs when pps and bps agree, else mixed
  std::string verdict_text;               // says both when mixed
};

struct comparison {
  std::string a_name, b_name;                     // as given
  std::vector<compare_row> rows;                  // baseline order; one-sided measurements are no rows
  std::vector<std::string> only_in_a, only_in_b;  // group keys
};

comparison compare_groups(const std::vector<repeat_group>& a, const std::vector<repeat_group>& b);
// Throws std::runtime_error naming an unreadable folder.
std::vector<comparison> compare_folders(const std::vector<std::filesystem::path>& dirs);

// Console: aligned, "+-"; markdown: "±".
std::string compare_console(const std::vector<comparison>& c);
std::string compare_markdown(const std::vector<comparison>& c);
nlohmann::json to_json(const compare_row& r);
nlohmann::json to_json(const std::vector<comparison>& c);

}  // namespace harness
