#pragma once
// ip, tc and nft: an argv (never a shell), a deadline, stderr kept for the error.
#include "harness/process/process.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace lab {

using argv_t = std::vector<std::string>;

inline constexpr std::chrono::milliseconds command_limit = std::chrono::seconds(10);

// A non-zero exit is the caller's to judge; throws only when it cannot start.
nb::process_outcome try_run(const argv_t& argv, const std::string& input = {});
// A non-zero exit or a timeout throws, naming the command and its stderr. Returns stdout.
std::string must_run(const argv_t& argv, const std::string& input = {});

}  // namespace lab
