// A rate search of the real programs on loopback (127.0.0.1 <- 127.0.0.2, .3): MLRsearch's record in
// summary.json in RFC 9971's terms, every load aggregate and per instance, the trials it ran, and the
// latency probe's steps at fractions of the PDR; report.md and the console say the same.
#include "harness/process/process.hpp"
#include "tests/support/temp_file.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string search_file_text(const fs::path& p) { return nb::test::read_text(p.string()); }

fs::path search_temp_dir() {
  const fs::path dir = fs::temp_directory_path() / fmt::format("harness-search-run-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Short goals, so the search ends in seconds; max_trials bounds it on a busy machine. On loopback the
// paced senders are the limit (the unpaced trial offers several times what they can pace), and every
// shortfall runs twice: the search steps down from the MRR in pairs of trials.
constexpr const char* search_run_plan = R"(name = "search"
[defaults]
duration = 1
interval = 0.5
warmup = 0
lead = 0.3
settle = 0.2
skew_bound_ms = 200    # the machine may be busy: a late start is not what this test is about
ports = [0, 0]
[hosts]
dev = { address = "127.0.0.1" }
a = { address = "127.0.0.2" }
b = { address = "127.0.0.3" }
[[tests]]
name = "s"
message_size = 64
topology = "fan-in"
server = "dev"
clients = ["a", "b"]
latency_probe = { pps = 50, idle = 0.5, size = 64 }
search = { max_trials = 40, goals = [
  { name = "NDR", loss_ratio = 0.0, final_trial_duration = 0.5, duration_sum = 0.5, initial_trial_duration = 0.3, width = 0.1 },
  { name = "PDR", loss_ratio = 0.005, exceed_ratio = 0.5, final_trial_duration = 0.5, duration_sum = 1, initial_trial_duration = 0.3, width = 0.1 } ] }
)";

}  // namespace

TEST_CASE("harness integration: a rate search on loopback records MLRsearch's goals, bounds and latency steps",
          "[harness][loopback][search]") {
  const fs::path root = search_temp_dir();
  std::ofstream(root / "search.toml") << search_run_plan;
  const auto o = nb::run_blocking({HARNESS_PATH, "run", (root / "search.toml").string(), "--results",
                                   (root / "results").string(), "--bin-dir", NETBENCH_BIN_DIR, "--no-live"},
                                  170s);
  INFO(o.stderr_text << o.stdout_text);
  REQUIRE(o.exit_code == 0);
  fs::path dir;
  for (const auto& e : fs::directory_iterator(root / "results"))
    if (e.is_directory()) dir = e.path();
  const json summary = json::parse(search_file_text(dir / "summary.json"));
  const json* found = nullptr;
  for (const json& r : summary.at("runs"))
    if (r.contains("search")) found = &r;
  REQUIRE(found);
  const json& s = found->at("search");
  CHECK(s.at("procedure") == "MLRsearch (RFC 9971)");
  CHECK(s.at("load_conversion") == "aggregate = per instance × 2 instances");
  CHECK(s.at("goals").at(1).at("duration_sum") == 1.0);
  const json& mrr = s.at("mrr");
  CHECK(mrr.at("unpaced") == true);
  CHECK(mrr.at("offered_rate").get<double>() > 0);
  REQUIRE(s.at("trials").size() >= 3);
  double seconds = 0;
  for (const json& t : s.at("trials")) {
    if (t.at("phase") == "latency") continue;
    seconds += t.at("trial_duration").get<double>();
    if (t.at("unpaced") == true) continue;
    // Every paced trial's load split equally: per instance is half of the aggregate, and netload was asked for it.
    CHECK(t.at("intended_load_per_instance").get<double>() == Approx(t.at("intended_load").get<double>() / 2));
    const json run = json::parse(search_file_text(dir / "raw" / t.at("run").get<std::string>() / "run.json"));
    CHECK(run.at("requested_pps").get<double>() == Approx(t.at("intended_load_per_instance").get<double>()));
  }
  CHECK(s.at("trial_seconds").get<double>() == Approx(seconds));
  REQUIRE(s.at("goal_results").size() == 2);
  for (const json& g : s.at("goal_results")) {
    INFO(g.dump());
    for (const char* key :
         {"relevant_lower_bound", "relevant_upper_bound", "conditional_throughput", "regular", "irregularities",
          "relevant_lower_bound_per_instance", "conditional_throughput_per_instance"})
      CHECK(g.contains(key));
    // Loopback carries at least a few thousand 64-byte datagrams a second without loss.
    REQUIRE(g.at("relevant_lower_bound").is_number());
    CHECK(g.at("relevant_lower_bound").get<double>() > 1000);
    CHECK(g.at("relevant_lower_bound_per_instance").get<double>() ==
          Approx(g.at("relevant_lower_bound").get<double>() / 2));
    // Irregular results name why; a regular one may still name what happened on the way (a trial that
    // failed to run and was repeated, a busy sender's shortfall), as RFC 9971 allows.
    if (!g.at("regular").get<bool>()) CHECK_FALSE(g.at("irregularities").empty());
  }
  // The latency probe at the minimal load and at 10, 50 and 90 % of the PDR's conditional throughput.
  const json& latency = s.at("latency");
  REQUIRE(latency.size() == 4);
  const double pdr = s.at("goal_results").at(1).at("conditional_throughput").get<double>();
  CHECK(latency[0].at("name") == "minimal load");
  CHECK(latency[2].at("name") == "50 % of PDR");
  CHECK(latency[2].at("intended_load").get<double>() == Approx(0.5 * pdr));
  for (const json& l : latency) {
    INFO(l.dump());
    CHECK_FALSE(l.contains("error"));
    CHECK(l.at("latency").at("count").get<int>() > 0);
    CHECK(l.at("latency").at("p99_us").get<double>() >= l.at("latency").at("p50_us").get<double>());
  }
  const std::string md = search_file_text(dir / "report.md");
  CHECK_THAT(md, Catch::Contains("## Rate search (MLRsearch, RFC 9971)") && Catch::Contains("relevant lower bound") &&
                     Catch::Contains("conditional throughput") &&
                     Catch::Contains("aggregate = per instance × 2 instances") && Catch::Contains("50 % of PDR"));
  CHECK_THAT(o.stdout_text,
             Catch::Contains("Rate search (MLRsearch, RFC 9971") && Catch::Contains("PDR (loss ratio 0.005)"));
  CHECK_THAT(o.stderr_text, Catch::Contains("relevant lower bound") && Catch::Contains("latency step (90 % of PDR)"));
}
