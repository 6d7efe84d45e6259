// `harness compare` on real results: the same tiny loopback plan (two instances, repeats = 2) run twice,
// then compared. The verdict may be anything (loopback is noisy); what must hold is that it is there, on
// every row, with the repeats' spread in summary.json and report.md.
#include "harness/process/process.hpp"

#include "tests/support/temp_file.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* plan = R"(name = "twice"
[defaults]
duration = 1
warmup = 0
lead = 0.5
settle = 0.2
repeats = 2
ports = [0, 0]
[hosts]
device = { address = "127.0.0.1" }
c1 = { address = "127.0.0.2" }
c2 = { address = "127.0.0.3" }
[groups]
clients = ["c1", "c2"]
[[tests]]
name = "pps"
message_size = 64
pps = 2000
topology = "fan-in"
server = "device"
clients = "clients"
)";

fs::path run_plan(const fs::path& root, const char* name) {
  const fs::path results = root / name;
  const auto o = nb::run_blocking({HARNESS_PATH, "run", (root / "twice.toml").string(), "--results", results.string(),
                                   "--bin-dir", NETBENCH_BIN_DIR, "--no-live"},
                                  60s);
  INFO(o.stderr_text << o.stdout_text);
  REQUIRE(o.exit_code == 0);
  CHECK(o.stdout_text.find("Repeats (spread of the run sums)") != std::string::npos);
  fs::path dir;
  for (const auto& e : fs::directory_iterator(results))
    if (e.is_directory()) dir = e.path();  // beside it: the results database
  return dir;
}

}  // namespace

TEST_CASE("harness integration: compare two results folders of a plan with repeats", "[harness][loopback][compare]") {
  const fs::path root = fs::temp_directory_path() / fmt::format("harness-compare-{}", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "twice.toml") << plan;
  const fs::path a = run_plan(root, "a"), b = run_plan(root, "b");

  const json summary = json::parse(nb::test::read_text(a / "summary.json"));
  REQUIRE(summary.at("repeats").size() == 1);
  const json& g = summary.at("repeats").at(0);
  CHECK(g.at("key") == "pps-m64");
  CHECK((g.at("runs") == json{"pps-m64-r1", "pps-m64-r2"}));
  CHECK(g.at("received_pps").at("n") == 2);
  CHECK(g.at("received_pps").at("ci95_low").is_number());
  CHECK(nb::test::read_text(a / "report.md").find("## Repeats") != std::string::npos);
  CHECK(nb::test::read_text(a / "summary.csv")
            .find("\"pps-m64\",\"pps\",\"device as server\",fan-in,UDP_STREAM,64,\"CI95_HIGH\"") != std::string::npos);

  const auto o =
      nb::run_blocking({HARNESS_PATH, "compare", a.string(), b.string(), "--out", (root / "cmp").string()}, 30s);
  INFO(o.stderr_text << o.stdout_text);
  REQUIRE(o.exit_code == 0);
  const json c = json::parse(nb::test::read_text(root / "cmp" / "compare.json"));
  const json& rows = c.at("comparisons").at(0).at("rows");
  REQUIRE(rows.size() == 1);
  for (const auto& r : rows) {
    const std::string v = r.at("verdict").get<std::string>();
    CHECK((v == "better" || v == "worse" || v == "no difference the repeats can show"));  // two ok runs a side
    CHECK(o.stdout_text.find(r.at("verdict_text").get<std::string>()) != std::string::npos);
    CHECK(r.at("received_pps").at("ci95_low").is_number());
  }
  const std::string md = nb::test::read_text(root / "cmp" / "compare.md");
  CHECK(md.find("| pps | device as server | 64 |") != std::string::npos);
  CHECK(md.find("only in") == std::string::npos);

  // A folder that is no results folder: exit status 1, the folder named.
  const auto bad = nb::run_blocking(
      {HARNESS_PATH, "compare", a.string(), (root / "nowhere").string(), "--out", (root / "cmp").string()}, 30s);
  CHECK(bad.exit_code == 1);
  CHECK(bad.stderr_text.find("nowhere") != std::string::npos);
  fs::remove_all(root);
}
