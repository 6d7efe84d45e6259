#pragma once
// The line `harness watch` prints for each run: when it started (and why then), the results folder, its
// verdict against the baseline with the figures behind it. One line each: the names and errors in it are
// shown with their control characters escaped (\n, \x1b).
#include "harness/app/app_run.hpp"

#include <chrono>
#include <string>

namespace harness::watch {

struct run_timing {
  int number = 1;
  std::chrono::seconds every{0};
  std::chrono::steady_clock::duration since_previous_start{}, previous_took{};  // from the second run on
  double started_unix = 0;
};

// "run 2 at 2026-12-03T11:30:02Z, 2.0 s after run 1 started: lb-20261203T113002Z: ok, no regression
// against up to 5 earlier results folders of the plan: t-m64 1998.0 pps (-0.1 %)"
std::string run_line(const run_timing& t, const finished_run& f);
// A run that could not run at all (its error, thrown by the runner).
std::string error_line(const run_timing& t, const std::string& error);

}  // namespace harness::watch
