// One search record from both programs: netload --search --json against a netserve on 127.0.0.1, and a
// harness rate search on 127.0.0.1, each "search" block read by the one reader (core/search/search_record.hpp)
// into the same goals, with the same fields; the store the harness recorded its folder in holds what the
// reader read.
#include "core/search/search_record.hpp"
#include "harness/process/process.hpp"
#include "harness/store/database.hpp"
#include "harness/store/trend/commands.hpp"
#include "tests/integration/netserve_fixture.hpp"
#include "tests/support/temp_file.hpp"

#include <SQLiteCpp/Statement.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Short, wide goals and a trial cap: each search ends in seconds on a busy machine.
constexpr const char* record_plan = R"(name = "record"
[defaults]
duration = 1
warmup = 0
lead = 0.3
settle = 0.2
skew_bound_ms = 200
ports = [0, 0]
[hosts]
dev = { address = "127.0.0.1" }
a = { address = "127.0.0.1" }
[[tests]]
name = "s"
message_size = 64
topology = "fan-in"
server = "dev"
clients = ["a"]
search = { max_trials = 30, goals = [
  { name = "NDR", loss_ratio = 0.0, final_trial_duration = 0.5, duration_sum = 1, initial_trial_duration = 0.3, width = 0.2 },
  { name = "PDR", loss_ratio = 0.005, final_trial_duration = 0.5, duration_sum = 1, initial_trial_duration = 0.3, width = 0.2 } ] }
)";

json netload_search() {
  nb::test::netserve_process server(1);
  std::vector<std::string> argv{nb::test::netload_path(), "-H", "127.0.0.1", "-p", std::to_string(server.port())};
  std::istringstream words(
      "-t UDP_STREAM --search both --duration-sum 1 --width 0.2 --initial-trial-duration 0.3 --final-trial-duration "
      "0.5 --settle 0.2 --max-trials 30 --max-search-time 40 --json -- -m 64");
  for (std::string w; words >> w;) argv.push_back(w);
  const auto o = nb::test::run(argv, 90s);
  server.stop();
  INFO(o.err);
  CHECK((o.status == 0 || o.status == 1));  // 1: a cap ended it first, the record written all the same
  return json::parse(o.out);
}

fs::path harness_search(const fs::path& root) {
  std::ofstream(root / "record.toml") << record_plan;
  const auto o = nb::run_blocking({HARNESS_PATH, "run", (root / "record.toml").string(), "--results",
                                   (root / "results").string(), "--bin-dir", NETBENCH_BIN_DIR, "--no-live"},
                                  150s);
  INFO(o.stderr_text << o.stdout_text);
  CHECK(o.exit_code == 0);
  for (const auto& e : fs::directory_iterator(root / "results"))
    if (e.is_directory()) return e.path();
  FAIL("no results folder");
  return {};
}

std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

void check_record(const nb::search::search_record& r, const json& block) {
  REQUIRE(r.goal_results.size() == 2);
  CHECK(r.goal_results[0].g.name == "NDR");
  CHECK(r.goal_results[1].g.name == "PDR");
  CHECK(r.goal_results[1].g.loss_ratio == 0.005);
  CHECK(r.goal_results[1].g.width == 0.2);
  REQUIRE(r.mrr);
  CHECK(r.mrr->forwarding_rate > 0);
  CHECK(r.trial_seconds > 0);
  // The serializer's fields, in the block and in each of its goal results.
  const auto record_keys = keys(nb::search::to_json(nb::search::search_record{}));
  for (const auto& k : record_keys) CHECK(block.contains(k));
  const auto result_keys = keys(nb::search::to_json(nb::search::goal_result{}));
  for (const json& g : block.at("goal_results"))
    for (const auto& k : result_keys) CHECK(g.contains(k));
}

}  // namespace

TEST_CASE("harness integration: netload's and the harness's search blocks are one record that one reader reads",
          "[harness][loopback][search]") {
  const json netload = netload_search();
  const json& from_netload = netload.at("search");
  INFO(from_netload.dump());
  const auto a = nb::search::read_search_record(from_netload);
  check_record(a, from_netload);
  // netload adds nothing to a goal result; the harness each load per instance and in bits.
  CHECK(keys(from_netload.at("goal_results")[0]) == keys(nb::search::to_json(nb::search::goal_result{})));

  const nb::test::temp_dir scratch;
  const fs::path dir = harness_search(scratch.path);
  const json summary = json::parse(nb::test::read_text((dir / "summary.json").string()));
  const json* found = nullptr;
  for (const json& r : summary.at("runs"))
    if (r.contains("search")) found = &r;
  REQUIRE(found);
  const json& from_harness = found->at("search");
  INFO(from_harness.dump());
  const auto b = nb::search::read_search_record(from_harness);
  check_record(b, from_harness);
  auto harness_keys = keys(nb::search::to_json(nb::search::goal_result{}));
  for (const std::string load : {"relevant_lower_bound", "relevant_upper_bound", "conditional_throughput"})
    harness_keys.insert({load + "_per_instance", load + "_bits_per_second"});
  CHECK(keys(from_harness.at("goal_results")[0]) == harness_keys);

  // The run recorded its folder in the store through the same reader: a row per goal, as read.
  harness::store::database db(dir.parent_path() / harness::store::default_db_name);
  SQLite::Statement st(db.sql(), "SELECT loss_target_pct, rate_pps FROM searches ORDER BY loss_target_pct");
  for (const auto& g : b.goal_results) {
    REQUIRE(st.executeStep());
    CHECK(st.getColumn(0).getDouble() == g.g.loss_ratio * 100);
    CHECK(st.getColumn(1).isNull() == !g.relevant_lower_bound);
    if (g.relevant_lower_bound) CHECK(st.getColumn(1).getDouble() == *g.relevant_lower_bound);
  }
  CHECK_FALSE(st.executeStep());
}
