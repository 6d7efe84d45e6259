#pragma once
// Running the lab's commands (ip, tc, nft) through the project's one runner (harness/process/process.hpp): always an
// argv, never a shell string, each with a deadline, stdout and stderr captured, so a failure reads
// "command `ip ...` failed: <its stderr>".
#include "harness/process/process.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace lab {

using argv_t = std::vector<std::string>;

// How long any one of ip, tc or nft may take before it is killed.
inline constexpr std::chrono::milliseconds command_limit = std::chrono::seconds(10);

// Runs argv with `input` on its stdin; a non-zero exit is the caller's to judge. Throws (lab_error)
// only when it cannot start.
nb::process_outcome try_run(const argv_t& argv, const std::string& input = {});
// Same, but a non-zero exit or a timeout is a lab_error naming the command and its stderr. Returns stdout.
std::string must_run(const argv_t& argv, const std::string& input = {});

}  // namespace lab
