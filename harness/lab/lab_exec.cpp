#include "harness/lab/lab_exec.hpp"

#include "harness/lab/lab.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace lab {

nb::process_outcome try_run(const argv_t& argv, const std::string& input) {
  try {
    return nb::run_blocking(argv, command_limit, input);
  } catch (const std::runtime_error& e) {
    throw lab_error(e.what());
  }
}

std::string must_run(const argv_t& argv, const std::string& input) {
  const nb::process_outcome r = try_run(argv, input);
  if (r.timed_out)
    throw lab_error(fmt::format("command `{}` did not finish within its deadline", nb::quote_argv(argv)));
  if (r.exit_code != 0) {
    std::string e = r.stderr_text.empty() ? r.stdout_text : r.stderr_text;
    while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
    for (auto& c : e)
      if (c == '\n') c = ' ';
    throw lab_error(fmt::format("command `{}` failed (exit {}): {}", nb::quote_argv(argv), r.exit_code, e));
  }
  return r.stdout_text;
}

}  // namespace lab
