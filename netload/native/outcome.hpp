#pragma once
// netload's exit status, from a result: one place for the single test (main.cpp) and --bidir's two.
#include "core/result/result.hpp"

#include <string>
#include <string_view>

namespace nb::load {

// Exit status: 0 the test ran and its counts reconcile; 1 the test failed (the reason is printed);
// 2 bad command line; 3 the test ran but sent != received + lost; 4 the test ran and reconciles, but a
// paced test's sender missed its target by more than 1 % (its figures are not the load that was asked
// for, which a script must not take for a pass).
enum exit_code { ok = 0, failed = 1, usage = 2, unreconciled = 3, target_missed = 4 };

// A test the user stopped exits 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell
// reports a program the signal ended, whether or not its figures reconcile (those are printed and in the
// JSON).
// The status of one result; prints why on stderr when it is not 0, after `label` ("" or "forward: ").
int exit_status(const test_result& r, std::string_view label = {});
// True for 128 + a signal's number: the user stopped the test.
constexpr bool is_interrupted_status(int status) noexcept { return status > 128; }
// Above an interrupted test's table: what its figures cover; "" for a test that ran its course.
std::string interrupted_line(const test_result& r);
// The worse of two statuses: failed, then unreconciled, then target missed, then ok.
int worse(int a, int b);

}  // namespace nb::load
