#pragma once
// `harness run PLAN --dry-run`: each host's commands, and the netperf / iperf3 commands they replace.
#include "harness/plan/plan.hpp"

#include <string>

namespace harness {

std::string dry_run(const plan& p, const std::string& local_bin_dir);

}  // namespace harness
