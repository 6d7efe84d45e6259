// TOML text is bounded before toml++ parses it: a 100-KB plan whose dotted key nests 50 000 tables deep
// crashed the harness (stack overflow in toml++'s recursive destruction) in `harness run` and `harness lab`.
#include "harness/lab/lab.hpp"
#include "harness/plan/plan.hpp"
#include "harness/report/results.hpp"
#include "harness/toml/toml_bounds.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using harness::find_toml_bounds_violation;

namespace {

std::string repeat(const std::string& s, std::size_t n, const std::string& sep = "") {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += (i ? sep : "") + s;
  return out;
}

std::string plan_error_of(const std::string& text) {
  try {
    harness::parse_plan(text, "plan.toml");
  } catch (const harness::plan_error& e) {
    return e.what();
  }
  return "";
}

// The depth the scanner reports for `text`: 0 when within a bound of 1 000.
int depth_of(const std::string& text) {
  for (int limit = 1; limit < 1000; ++limit)
    if (!find_toml_bounds_violation(text, 1 << 20, limit)) return limit;
  return 0;
}

}  // namespace

TEST_CASE("harness toml bounds: a 50 000-part dotted key is refused with its place, not a crash", "[harness][plan]") {
  const std::string deep = repeat("a", 50'000, ".");
  CHECK(plan_error_of(deep + " = 1\n") == "plan.toml:1:64: TOML syntax: keys nested deeper than 32 levels");
  CHECK(plan_error_of("[" + deep + "]\n") == "plan.toml:1:65: TOML syntax: table names nested deeper than 32 levels");
  CHECK(plan_error_of("name = \"x\"\n[[" + deep + "]]\n").starts_with("plan.toml:2:66: TOML syntax: table names"));
}

TEST_CASE("harness toml bounds: nested arrays and inline tables are refused past the bound", "[harness][plan]") {
  CHECK(plan_error_of("x = " + repeat("[", 40) + repeat("]", 40) + "\n") ==
        "plan.toml:1:37: TOML syntax: values nested deeper than 32 levels");
  CHECK(plan_error_of("x = " + repeat("{a = ", 40) + "1" + repeat("}", 40) + "\n").starts_with("plan.toml:1:"));
  CHECK(plan_error_of("x = " + repeat("{a = ", 40) + "1" + repeat("}", 40) + "\n")
            .ends_with("nested deeper than 32 levels"));
}

TEST_CASE("harness toml bounds: each level counts once, keys below headers and values below keys", "[harness][plan]") {
  CHECK(depth_of("a = 1\n") == 1);
  CHECK(depth_of("a.b.c = 1\n") == 3);
  CHECK(depth_of("[t.u]\nv.w = 1\n") == 4);
  CHECK(depth_of("[t]\nx.y = [1, [2, {k.l = 3}]]\n") == 7);  // t, x, y (the array), an array, a table, k, l
  CHECK(depth_of("x = {a = {b = {c = 1}}}\n") == 4);
  CHECK(depth_of("x = [\n  [1, 2],\n  [3],\n]\ny = 1\n") == 2);
}

TEST_CASE("harness toml bounds: dots and brackets inside strings and comments count for nothing", "[harness][plan]") {
  const std::string dots = repeat("a", 200, ".");
  CHECK(depth_of("s = \"" + dots + "[[[[{{{{\"\n") == 1);
  CHECK(depth_of("s = '" + dots + "'\n") == 1);
  CHECK(depth_of("s = \"\"\"\n" + dots + "\n[[[[\n\"\"\"\nt = 1\n") == 1);
  CHECK(depth_of("s = '''" + dots + "\n]]]'''\n") == 1);
  CHECK(depth_of("# " + dots + " [[[[[[\nx = \"a\\\"b.c\"  # " + dots + "\n") == 1);
  CHECK(depth_of("\"" + dots + "\" = 1\n") == 1);  // a quoted key is one part
  CHECK(depth_of("['" + dots + "']\nk = 1\n") == 2);
}

TEST_CASE("harness toml bounds: a file over 1 MiB is refused before parsing", "[harness][plan]") {
  const std::string big = "# " + std::string(harness::max_toml_bytes, 'x') + "\n";
  CHECK(plan_error_of(big).starts_with(
      "plan.toml:1:1: TOML syntax: the file is 1048579 bytes, more than the 1048576 accepted"));
}

TEST_CASE("harness toml bounds: every shipped plan is within bounds", "[harness][plan]") {
  for (const auto& entry : std::filesystem::directory_iterator(NETBENCH_CONFIGS_DIR)) {
    if (entry.path().extension() != ".toml") continue;
    std::ifstream in(entry.path());
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    INFO(entry.path());
    CHECK_FALSE(find_toml_bounds_violation(text));
    CHECK(depth_of(text) <= 6);
  }
}

TEST_CASE("harness toml bounds: a lab file is bounded too", "[harness][lab]") {
  const auto file = std::filesystem::temp_directory_path() / fmt::format("deep-lab-{}.toml", ::getpid());
  std::ofstream(file) << "[lab]\n" << repeat("a", 50'000, ".") << " = 1\n";
  std::string error;
  try {
    lab::load_lab(file.string());
  } catch (const lab::lab_error& e) {
    error = e.what();
  }
  std::filesystem::remove(file);
  CHECK(error == fmt::format("{}:2:62: TOML syntax: keys nested deeper than 32 levels", file.string()));
}

TEST_CASE("harness results: a run.json nested 200 000 deep is refused with its file name", "[harness][report]") {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("deep-run-{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "run.json") << std::string(200'000, '[') << std::string(200'000, ']');
  std::string error;
  try {
    harness::load_run(dir);
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::filesystem::remove_all(dir);
  CHECK(error == fmt::format("{}: nested deeper than 16 levels", (dir / "run.json").string()));
}

TEST_CASE("harness toml bounds: a multi-line string ending in extra quotes does not hide what follows it",
          "[harness][plan]") {
  // """a"""" is the text a": read as a string closed after three quotes and a fourth opening another,
  // the rest of the line went unseen, and a 150 000-part key behind it crashed toml++ (found in review).
  CHECK(plan_error_of("x = [\"\"\"a\"\"\"\", " + repeat("[", 200) + repeat("]", 200) + "]\n")
            .ends_with("values nested deeper than 32 levels"));
  CHECK(plan_error_of("x = ['''a'''', " + repeat("[", 200) + repeat("]", 200) + "]\n")
            .ends_with("values nested deeper than 32 levels"));
  CHECK(plan_error_of("x = [\"\"\"a\"\"\"\", {" + repeat("k", 150'000, ".") + " = 1}]\n")
            .ends_with("nested deeper than 32 levels"));
  CHECK(depth_of("s = \"\"\"a\"\"\"\"\"\nt = 1\n") == 1);  // the text a"": five quotes end it
}

TEST_CASE("harness toml bounds: a line crowded with dots or brackets is refused even inside a string",
          "[harness][plan]") {
  // The second bound, independent of how the scan reads strings: whatever hides a deep key from the
  // scan, the key still needs thousands of dots on one line.
  CHECK(plan_error_of("s = \"" + repeat("a", 300, ".") + "\"\n") ==
        "plan.toml:1:519: TOML syntax: more than 256 of '.', '[' and '{' on one line");
  CHECK(depth_of("s = \"" + repeat("a", 250, ".") + "\"\n") == 1);
}

TEST_CASE("harness plan file: one that cannot be read says the system's reason", "[harness][plan]") {
  CHECK_THROWS_WITH(harness::load_plan("/nonexistent/foo.toml"),
                    "/nonexistent/foo.toml: cannot read the plan file: No such file or directory");
  const auto dir = std::filesystem::temp_directory_path();
  CHECK_THROWS_WITH(harness::load_plan(dir.string()), Catch::EndsWith("cannot read the plan file: Is a directory"));
  CHECK_THROWS_WITH(lab::load_lab("/nonexistent/lab.toml"), Catch::EndsWith(": No such file or directory"));
}
