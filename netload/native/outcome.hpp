#pragma once
// netload's exit status, from a result: for the single test (main.cpp) and --bidir's two.
#include "core/result/result.hpp"

#include <string>
#include <string_view>

namespace nb::load {

// target_missed: a paced sender missed by more than 1 %: not the load asked for, which a script must
// not take for a pass.
enum exit_code { ok = 0, failed = 1, usage = 2, unreconciled = 3, target_missed = 4 };

// 128 + the signal's number for a test the user stopped, as a shell reports it; else an exit_code.
// Prints why on stderr after `label`.
int exit_status(const test_result& r, std::string_view label = {});
constexpr bool is_interrupted_status(int status) noexcept { return status > 128; }
// Above an interrupted test's table: what its figures cover; "" for a test that ran its course.
std::string interrupted_line(const test_result& r);
// Interrupted, then failed, usage, unreconciled, target missed, ok.
int worse(int a, int b);

}  // namespace nb::load
