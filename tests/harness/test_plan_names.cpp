// Names a plan gives (issue 40, findings 8 and 9a): the plan's, a test's and a host's become part of file
// and folder names under --results, so each must be a safe path component; every name is printed, so none
// may hold a control character. A name that breaks either is refused where the plan gives it
// (file:line:col), and the error shows it escaped.
#include "harness/plan/expand.hpp"
#include "harness/plan/plan.hpp"

#include <catch2/catch.hpp>

#include <string>

using harness::parse_plan;
using harness::plan_error;

namespace {

// The plan_error message of a plan (named plan.toml, or `path`), "" when it parses.
std::string refusal(const std::string& text, const std::string& path = "plan.toml") {
  try {
    parse_plan(text, path);
  } catch (const plan_error& e) {
    return e.what();
  }
  return "";
}

// One fan-in test `test` from host `client` to host "dev", in a plan named by `name_line`.
std::string plan_with(const std::string& name_line, const std::string& test, const std::string& client,
                      const std::string& extra = "") {
  return name_line + "\n[defaults]\nports = [0]\n[hosts]\ndev = { address = \"127.0.0.1\" }\n\"" + client +
         "\" = { address = \"127.0.0.2\" }\n" + extra + "[[tests]]\nname = \"" + test +
         "\"\nmessage_size = 64\ntopology = \"fan-in\"\nserver = \"dev\"\nclients = [\"" + client + "\"]\n";
}

bool has_control_byte(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

}  // namespace

TEST_CASE("harness plan: a plan name that would leave the results folder is refused where it is given",
          "[harness][plan][names]") {
  CHECK(refusal(plan_with("name = \"ok-plan\"", "t", "a")).empty());
  for (const char* name : {"../escaped", "a/b", "/abs", "..", "."}) {
    const std::string e = refusal(plan_with(fmt::format("name = \"{}\"", name), "t", "a"));
    INFO(name << ": " << e);
    CHECK(e.starts_with("plan.toml:1:8: plan: name '"));
    CHECK(e.find("would leave its folder") != std::string::npos);
  }
  CHECK(refusal(plan_with("name = \"\"", "t", "a")) == "plan.toml:1:8: plan: name '' is empty");
  CHECK(refusal(plan_with("name = \"" + std::string(65, 'x') + "\"", "t", "a")).find("65 bytes long, more than 64") !=
        std::string::npos);
  // No 'name': the file's name is the plan's, and it is checked as well.
  CHECK(refusal(plan_with("", "t", "a"), "/tmp/x\x1b[2J.toml")
            .starts_with("/tmp/x\x1b[2J.toml: plan: its name (the file's name, as the plan gives no 'name') holds a "
                         "control character (\\x1b)"));
}

TEST_CASE("harness plan: test and host names are safe path components and print as they are",
          "[harness][plan][names]") {
  const std::string test_error = refusal(plan_with("name = \"p\"", "..\\u002F..\\u002Fx", "a"));
  CHECK(test_error.starts_with("plan.toml:8:8: tests[0]: name '../../x' would leave its folder"));
  // A host name is part of the instances' file names ("01-a.json") and of a pairs run's folder.
  CHECK(refusal(plan_with("name = \"p\"", "t", "../a")).starts_with("plan.toml:6:1: hosts: host name '../a' would"));
  CHECK(refusal(plan_with("name = \"p\"", "t", "a/b")).find("would leave its folder") != std::string::npos);
  // Control characters, C0, DEL and C1: refused, and shown escaped in the error.
  for (const char* name : {"t\\u001B[2J", "t\\u0007", "t\\rFORGED", "t\\nx", "t\\u007F", "t\\u009B"}) {
    const std::string e = refusal(plan_with("name = \"p\"", name, "a"));
    INFO(name << ": " << e);
    CHECK(e.starts_with("plan.toml:8:8: tests[0]: name 't"));
    CHECK(e.find("holds a control character") != std::string::npos);
    CHECK_FALSE(has_control_byte(e));
    CHECK(e.find("\xc2\x9b") == std::string::npos);
  }
  CHECK(refusal(plan_with("name = \"p\\u001B]0;x\\u0007\"", "t", "a"))
            .starts_with("plan.toml:1:8: plan: name 'p\\x1b]0;x\\x07' holds"));
  CHECK(refusal(plan_with("name = \"p\"", "t", "a\\u001Bb"))
            .starts_with("plan.toml:6:1: hosts: host name 'a\\x1bb' holds"));
  // Names that are no path component but are printed: groups, goals, categories.
  CHECK(refusal(plan_with("name = \"p\"", "t", "a", "[groups]\n\"g\\u0007\" = [\"a\"]\n"))
            .starts_with("plan.toml:8:1: groups: group name 'g\\x07' holds a control character"));
  // Names the checks let through: spaces (in a host name), UTF-8, dots inside, a backslash.
  const auto p = parse_plan(plan_with("name = \"plan ü.v2\"", "t.1\\\\x", "host ü"), "plan.toml");
  CHECK(p.name == "plan ü.v2");
  CHECK(harness::expand(p).front().id == "t.1\\x-m64");
  CHECK(harness::expand(p).front().instances.front().name == "01-host ü");
}
