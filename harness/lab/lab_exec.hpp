#pragma once
// Running the lab's commands (ip, tc, nft): always an argv, never a shell string, each with a deadline,
// stdout and stderr captured, so a failure reads "command `ip ...` failed: <its stderr>".
#include <chrono>
#include <string>
#include <vector>

namespace lab {

struct command_result {
  int status = -1;  // exit code; 128 + signal when killed
  std::string out, err;
  bool timed_out = false;
};

using argv_t = std::vector<std::string>;

// Runs argv with `input` on its stdin; kills it (SIGKILL) at the deadline. Throws only when it cannot start.
command_result run_command(const argv_t& argv, const std::string& input = {},
                           std::chrono::milliseconds deadline = std::chrono::seconds(10));
// Same, but a non-zero exit or a timeout is a lab_error naming the command and its stderr. Returns stdout.
std::string must_run(const argv_t& argv, const std::string& input = {});
// Shell-like rendering for messages only (never executed).
std::string show(const argv_t& argv);

}  // namespace lab
