#pragma once
// `harness compare A B [C ...]`: the same measurements in two or more results folders, side by side. The
// first folder is the baseline; each later one is compared with it, measurement by measurement (test,
// role, message size, load, route), on the received pps and Mbit/s of the run sums. A difference is
// called better or worse only when the repeats show it: the 95 % confidence interval of the difference
// of the means (Welch's t) lies wholly above or below zero.
#include "harness/report/model/stats.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace harness {

enum class verdict {
  better,         // the interval of B - A lies wholly above zero
  worse,          // wholly below zero
  no_difference,  // contains zero: what the repeats can show is no difference
  one_run,        // a side has fewer than 2 ok runs: no interval, so neither better nor worse
  no_ok_run,      // a side has no ok run at all: nothing to compare
  mixed,          // a row only: received pps and Mbit/s judged differently (verdict_text says both)
};
// "better", "worse", "no difference the repeats can show", "one run: no interval", "no ok run", "mixed"
std::string to_string(verdict v);

// B's mean minus A's, with its 95 % interval (Welch's t, Welch-Satterthwaite degrees of freedom).
struct difference {
  double diff = 0;
  bool has_interval = false;  // both sides have >= 2 ok runs
  double low = 0, high = 0;   // the interval; both equal diff when there is none
  double dof = 0;             // Welch-Satterthwaite, before rounding down for the t table
  verdict judged = verdict::one_run;
};
difference welch_difference(const spread& a, const spread& b);
// (b - a) / a in %; NaN when a's mean is 0 or a side has no ok run.
double change_percent(const spread& a, const spread& b);

// One measurement in the baseline (a) and in a later folder (b).
struct compare_row {
  repeat_group a, b;                      // their groups (test, role, m, load, route are the same in both)
  difference pps, bps;                    // of the received pps and received bit/s of the run sums
  double pps_change = 0, bps_change = 0;  // %, NaN: see change_percent
  verdict judged = verdict::one_run;      // pps and bps agree (UDP at one message size always does): theirs;
  std::string verdict_text;               // else mixed, and the text says both: "pps: better; Mbit/s: ..."
};

// The baseline and one later folder.
struct comparison {
  std::string a_name, b_name;                     // the folders as given
  std::vector<compare_row> rows;                  // in the baseline's order; measurements on one side only are not rows
  std::vector<std::string> only_in_a, only_in_b;  // group keys present on one side only
};

// Pure: matches the groups of two folders (same_measurement) and judges each pair.
comparison compare_groups(const std::vector<repeat_group>& a, const std::vector<repeat_group>& b);
// Loads each folder's raw/ (as `harness report` does) and compares every later folder with the first.
// Throws std::runtime_error naming an unreadable folder.
std::vector<comparison> compare_folders(const std::vector<std::filesystem::path>& dirs);

// Text: the table (console: aligned, "+-"; markdown: "±"), and compare.json's content.
std::string compare_console(const std::vector<comparison>& c);
std::string compare_markdown(const std::vector<comparison>& c);
nlohmann::json to_json(const compare_row& r);
nlohmann::json to_json(const std::vector<comparison>& c);

}  // namespace harness
