#pragma once
// `harness run PLAN --dry-run`: per host, the exact commands the run would execute there, and the
// netperf / iperf3 commands of the hand procedure they replace. Builds strings only: no process, no socket.
#include "harness/plan/plan.hpp"

#include <string>

namespace harness {

std::string dry_run(const plan& p, const std::string& local_bin_dir);

}  // namespace harness
