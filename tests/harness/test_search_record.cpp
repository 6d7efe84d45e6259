// The search record (core/search/search_record.hpp): what the one serializer writes reads back as it was;
// the shapes earlier versions wrote (fixtures in search_records/: the harness's goal results as it wrote
// them before, a real run's; netload's results naming their goal; the harness's loss targets before
// MLRsearch) read into the same record, import into the store from a results folder and reach the metrics;
// a field of the wrong type is refused by name.
#include "core/search/search_record.hpp"
#include "harness/store/database.hpp"
#include "harness/store/record.hpp"
#include "harness/watch/metrics.hpp"
#include "tests/support/temp_file.hpp"

#include <SQLiteCpp/Statement.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <tuple>

namespace fs = std::filesystem;
using nb::search::read_search_record;
using nlohmann::json;

namespace {

json fixture(const char* name) {
  return json::parse(nb::test::read_text((fs::path(NETBENCH_SEARCH_RECORDS) / name).string()));
}

// A results folder holding one search record, as a harness run leaves it.
fs::path folder_with(const fs::path& root, const json& record) {
  const fs::path dir = root / "p-20261201T000000Z";
  fs::create_directories(dir / "raw" / "t-m64");
  std::ofstream(dir / "raw" / "t-m64" / "search.json") << record.dump(2);
  return dir;
}

// The store's rows of a search: loss target %, rate pps, rate bps, converged, MRR.
using search_row = std::tuple<double, std::optional<double>, std::optional<double>, int, std::optional<double>>;
std::vector<search_row> stored_searches(harness::store::database& db, const std::string& run) {
  SQLite::Statement st(db.sql(),
                       "SELECT loss_target_pct, rate_pps, rate_bps, converged, mrr_received_pps FROM searches"
                       " WHERE run = ? ORDER BY loss_target_pct");
  st.bind(1, run);
  const auto number = [&](int k) {
    return st.getColumn(k).isNull() ? std::optional<double>() : std::optional<double>(st.getColumn(k).getDouble());
  };
  std::vector<search_row> out;
  while (st.executeStep())
    out.emplace_back(st.getColumn(0).getDouble(), number(1), number(2), st.getColumn(3).getInt(), number(4));
  return out;
}

nb::search::search_record sample_record() {
  nb::search::search_record r;
  r.goals = {nb::search::ndr_goal(), nb::search::pdr_goal()};
  r.goal_results = nb::search::goal_results_of(r.goals, nullptr, true, "interrupted by a stop");
  r.goal_results[1].relevant_lower_bound = 1000;
  r.goal_results[1].conditional_throughput = 998.5;
  r.goal_results[1].trial_seconds = 4.5;
  r.mrr = nb::search::unpaced_rates{5000, 1200};
  r.trial_seconds = 6;
  r.interrupted = true;
  r.stopped = "interrupted by a stop";
  return r;
}

}  // namespace

TEST_CASE("search record: what the serializer writes reads back as it was", "[search][record]") {
  const auto r = sample_record();
  const json j = nb::search::to_json(r);
  CHECK(j.at("procedure") == "MLRsearch (RFC 9971)");
  CHECK(j.at("goal_results")[0].at("goal").at("name") == "NDR");
  CHECK(j.at("goal_results")[0].at("irregularities") == json::array({"interrupted by a stop"}));
  CHECK(j.at("goal_results")[0].at("interrupted") == true);
  const auto back = read_search_record(j);
  REQUIRE(back.goal_results.size() == 2);
  CHECK(back.goals.size() == 2);
  CHECK(back.goals[1].loss_ratio == 0.005);
  const auto& pdr = back.goal_results[1];
  CHECK(pdr.g.name == "PDR");
  CHECK(pdr.g.duration_sum == 21);
  CHECK(pdr.relevant_lower_bound == 1000.0);
  CHECK_FALSE(pdr.relevant_upper_bound);
  CHECK(pdr.conditional_throughput == 998.5);
  CHECK(pdr.trial_seconds == 4.5);
  CHECK(pdr.interrupted);
  REQUIRE(back.mrr);
  CHECK(back.mrr->offered_rate == 5000);
  CHECK(back.mrr->forwarding_rate == 1200);
  CHECK(back.trial_seconds == 6);
  CHECK(back.interrupted);
  CHECK(back.stopped == "interrupted by a stop");
  // The record with a program's own fields beside it, and its own figures in a result: read as before.
  json more = j;
  more["trials"] = json::array();
  more["goal_results"][1]["relevant_lower_bound_per_instance"] = 500.0;
  CHECK(read_search_record(more).goal_results[1].relevant_lower_bound == 1000.0);
}

TEST_CASE("search record: a field missing or of the wrong type is named", "[search][record]") {
  const json good = nb::search::to_json(sample_record());
  const auto refusal = [](const json& j) {
    try {
      read_search_record(j);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(read)");
  };
  json j = good;
  j["goal_results"][1]["regular"] = "yes";
  CHECK(refusal(j) == "search goal_results[1]: field 'regular' must be a boolean");
  j = good;
  j["goal_results"][0]["goal"].erase("loss_ratio");
  CHECK(refusal(j) == "search goal_results[0] goal: field 'loss_ratio' is missing");
  j = good;
  j["goal_results"][0]["goal"]["colour"] = "red";  // a goal is its parameters and nothing else
  CHECK(refusal(j) == "search goal_results[0] goal: field 'colour' is not a known field");
  j = good;
  j["mrr"]["forwarding_rate"] = "fast";
  CHECK(refusal(j) == "search mrr: field 'forwarding_rate' must be a number");
  j = good;
  j.erase("goal_results");
  CHECK(refusal(j) == "search: field 'goal_results' is missing");
  CHECK(refusal(json(nullptr)) == "search must be an object");
  json old = fixture("netload-results.json").at("search");
  old["results"][0]["goal"] = "MRR";
  CHECK(refusal(old) == "search results[0]: field 'goal' names none of the goals");
}

TEST_CASE("search record: the harness's goal results as it wrote them before (a real run's)", "[search][record]") {
  const auto r = read_search_record(fixture("harness-goal-results.search.json").at("search"));
  REQUIRE(r.goal_results.size() == 2);
  CHECK(r.goal_results[1].g.name == "PDR");
  CHECK(r.goal_results[1].g.loss_ratio == 0.005);
  CHECK(r.goal_results[1].g.width == 0.2);
  CHECK(r.goal_results[1].relevant_lower_bound == 2125922.0);
  CHECK_FALSE(r.goal_results[1].relevant_upper_bound);
  CHECK_FALSE(r.goal_results[1].regular);
  CHECK(r.goal_results[1].irregularities.size() == 2);
  REQUIRE(r.mrr);
  CHECK(r.mrr->forwarding_rate == Approx(10210072.7178));
  CHECK(r.trial_seconds == 3.3);
  CHECK_FALSE(r.interrupted);
}

TEST_CASE("search record: netload's results as it wrote them before, each goal by its name", "[search][record]") {
  const auto r = read_search_record(fixture("netload-results.json").at("search"));
  REQUIRE(r.goal_results.size() == 2);
  CHECK(r.goals.size() == 2);
  CHECK(r.goal_results[0].g.name == "NDR");
  CHECK(r.goal_results[0].g.loss_ratio == 0);
  CHECK(r.goal_results[1].g.name == "PDR");
  CHECK(r.goal_results[1].g.loss_ratio == 0.005);
  CHECK(r.goal_results[1].g.duration_sum == 1);
  CHECK(r.goal_results[1].relevant_lower_bound == 2826908.0);
  CHECK(r.goal_results[1].conditional_throughput == 2826908.0);
  CHECK_FALSE(r.goal_results[1].interrupted);
  CHECK_FALSE(r.mrr);  // netload wrote its unpaced trial beside the record, not in it
  CHECK(r.trial_seconds == 2.3);
}

TEST_CASE("search record: the harness's loss targets before MLRsearch, as goals", "[search][record]") {
  const auto r = read_search_record(fixture("harness-loss-targets.search.json").at("search"));
  REQUIRE(r.goal_results.size() == 3);
  const auto& pdr = r.goal_results[1];
  CHECK(pdr.g.name == "PDR");
  CHECK(pdr.g.loss_ratio == 0.005);
  // As the plans' older form maps its settings: final trial 30 s (also the duration sum), width 1 %.
  CHECK(pdr.g.final_trial_duration == 30);
  CHECK(pdr.g.duration_sum == 30);
  CHECK(pdr.g.initial_trial_duration == 2);
  CHECK(pdr.g.width == 0.01);
  CHECK(pdr.g.exceed_ratio == 0);
  CHECK(pdr.relevant_lower_bound == 135000.0);
  CHECK_FALSE(pdr.regular);
  CHECK(pdr.irregularities == std::vector<std::string>{"precision not reached within max_trials"});
  CHECK(r.goal_results[2].g.name == "loss 2 %");
  CHECK_FALSE(r.goal_results[2].relevant_lower_bound);
  REQUIRE(r.mrr);
  CHECK(r.mrr->forwarding_rate == 150000);
  CHECK(r.mrr->offered_rate == 200000);
  CHECK(r.trial_seconds == 68);  // its trials, the MRR and the finals included
}

TEST_CASE("search record: results folders of earlier versions import into the store and reach the metrics",
          "[search][record][store]") {
  nb::test::temp_dir t;
  harness::store::database db(t.path / "s.sqlite");
  const json goals = fixture("harness-goal-results.search.json");
  harness::store::record(db, harness::store::read_folder(folder_with(t.path / "a", goals)));
  const double mrr = goals.at("search").at("mrr").at("forwarding_rate").get<double>();
  CHECK(stored_searches(db, "t-m64") ==
        std::vector<search_row>{{0.0, 2125922.0, 2125922.0 * 512, 0, mrr}, {0.5, 2125922.0, 2125922.0 * 512, 0, mrr}});
  json targets = fixture("harness-loss-targets.search.json");
  targets["id"] = "u-m64";  // a search of its own in the metrics
  harness::store::record(db, harness::store::read_folder(folder_with(t.path / "b", targets)));
  CHECK(stored_searches(db, "u-m64") == std::vector<search_row>{{0.0, 120000.0, 120000.0 * 512, 1, 150000.0},
                                                                {0.5, 135000.0, 135000.0 * 512, 0, 150000.0},
                                                                {2.0, std::nullopt, std::nullopt, 0, 150000.0}});
  // A field of the wrong type refuses the folder, naming the search and the field.
  json bad = goals;
  bad["search"]["goal_results"][0]["relevant_lower_bound"] = "2 M";
  CHECK_THROWS_WITH(harness::store::record(db, harness::store::read_folder(folder_with(t.path / "c", bad))),
                    "search t-m64: search goal_results[0]: field 'relevant_lower_bound' must be a number");
  const harness::watch::completed_run last{"p", {}, {goals, targets}, std::nullopt};
  const std::string text = harness::watch::render_openmetrics({}, last);
  CHECK_THAT(text, Catch::Contains(R"(measurement="t-m64",role="device as server",message_size="64",)"
                                   R"(netbench_instance="all",loss_target_ratio="0.005"} 2125922)") &&
                       Catch::Contains(R"(measurement="u-m64",role="device as server",message_size="64",)"
                                       R"(netbench_instance="all",loss_target_ratio="0.005"} 135000)") &&
                       !Catch::Contains(R"(loss_target_ratio="0.02")"));
}
