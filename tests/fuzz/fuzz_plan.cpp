// Fuzz target for the plan parser: any bytes must become a typed plan, or a plan_error that names the
// place (file:line:col), never a crash, a hang, another exception, or memory without bound. Plans come
// from users, not peers, but a bad one must still read like a compiler error. What parses is expanded
// into runs too, which is where the plan's numbers multiply.
#include "harness/plan/expand.hpp"
#include "harness/plan/plan.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const harness::plan p = harness::parse_plan(text, "fuzz.toml");
    const auto runs = harness::expand(p);
    if (runs.empty()) __builtin_trap();  // a plan has tests, and every test runs at least once
  } catch (const harness::plan_error& e) {
    if (std::string_view(e.what()).substr(0, 9) != "fuzz.toml") __builtin_trap();
  }
  return 0;
}
