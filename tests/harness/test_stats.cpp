// Repeats: Student's t, the spread of a figure, groups of repeated runs, and `harness compare`'s matching
// and verdicts, on synthetic run summaries.
#include "harness/report/compare.hpp"
#include "harness/report/model/stats.hpp"
#include "harness/report/report.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cmath>

using harness::verdict;

namespace {

// A run as summarize() leaves it: its id and run.json fields, ok or not, its sums.
harness::run_summary run(const std::string& test, std::uint32_t m, int repeat, double received_pps, bool ok = true,
                         nlohmann::json extra = nlohmann::json::object()) {
  harness::run_summary s;
  s.run.test = test;
  s.run.role = "device as server";
  s.run.message_size = m;
  s.run.id = fmt::format("{}-m{}-r{}", test, m, repeat);
  s.run.spec = {{"id", s.run.id}, {"repeat", repeat}, {"requested_pps", nullptr}, {"requested_rate", nullptr}};
  s.run.spec.update(extra);
  s.ok = ok;
  if (!ok) {
    s.failures.push_back("01-c1: netload failed");
    return s;
  }
  s.sender.pps = received_pps * 1.01;
  s.receiver.pps = received_pps;
  s.sender.bps = s.sender.pps * 8 * m;
  s.receiver.bps = received_pps * 8 * m;
  s.loss_percent = 1.0 / 1.01;
  return s;
}

harness::repeat_group group(const std::string& test, std::vector<double> pps) {
  std::vector<harness::run_summary> runs;
  int k = 0;
  for (double p : pps) runs.push_back(run(test, 64, ++k, p));
  auto g = harness::group_repeats(runs);
  REQUIRE(g.size() == 1);
  return g.front();
}

}  // namespace

TEST_CASE("stats: Student's t, two-sided 95 %", "[harness][stats]") {
  CHECK(harness::student_t95(1) == Approx(12.706).margin(5e-4));
  CHECK(harness::student_t95(2) == Approx(4.303).margin(5e-4));
  CHECK(harness::student_t95(4) == Approx(2.776).margin(5e-4));
  CHECK(harness::student_t95(9) == Approx(2.262).margin(5e-4));
  CHECK(harness::student_t95(30) == Approx(2.042).margin(5e-4));
  CHECK(harness::student_t95(31) == Approx(2.0395).margin(1e-4));
  CHECK(harness::student_t95(40) == Approx(2.021).margin(5e-4));
  CHECK(harness::student_t95(120) == Approx(1.980).margin(5e-4));
  CHECK(harness::student_t95(100000) == Approx(1.960).margin(5e-4));
  for (int dof = 1; dof < 200; ++dof) CHECK(harness::student_t95(dof + 1) < harness::student_t95(dof));
  CHECK_THROWS(harness::student_t95(0));
}

TEST_CASE("stats: describe gives mean, sample sd, min, max and the 95 % interval", "[harness][stats]") {
  const auto s = harness::describe({10, 12, 14});
  CHECK(s.n == 3);
  CHECK(s.mean == Approx(12));
  CHECK(s.sd == Approx(2));
  CHECK(s.min == 10);
  CHECK(s.max == 14);
  REQUIRE(s.has_interval());
  CHECK(s.ci_low == Approx(12 - 4.303 * 2 / std::sqrt(3.0)).epsilon(1e-4));
  CHECK(s.ci_high == Approx(12 + 4.303 * 2 / std::sqrt(3.0)).epsilon(1e-4));

  const auto one = harness::describe({5});
  CHECK(one.n == 1);
  CHECK_FALSE(one.has_interval());
  CHECK(one.sd == 0);
  CHECK(one.ci_low == 5);
  CHECK(one.ci_high == 5);
  CHECK(harness::describe({}).n == 0);
}

TEST_CASE("stats: repeats grouped, failed runs counted, search trials and other loads apart", "[harness][stats]") {
  std::vector<harness::run_summary> runs{run("pps", 64, 1, 100),
                                         run("pps", 64, 2, 200),
                                         run("pps", 64, 3, 0, false),
                                         run("pps", 1400, 1, 50),
                                         run("pps", 64, 1, 999, true, {{"search_trial", {{"search", "s"}}}}),
                                         run("paced", 64, 1, 10, true, {{"requested_pps", 10}}),
                                         run("paced", 64, 1, 20, true, {{"requested_pps", 20}}),
                                         run("paced", 64, 2, 12, true, {{"requested_pps", 10}})};
  runs[5].run.id = "paced-m64-p10-r1";
  runs[6].run.id = "paced-m64-p20-r1";
  runs[7].run.id = "paced-m64-p10-r2";
  const auto g = harness::group_repeats(runs);
  REQUIRE(g.size() == 4);
  CHECK(g[0].key == "pps-m64");
  CHECK((g[0].runs == std::vector<std::size_t>{0, 1, 2}));
  CHECK(g[0].failed == 1);
  CHECK(g[0].received_pps.n == 2);  // the failed run is not a zero
  CHECK(g[0].received_pps.mean == Approx(150));
  CHECK(g[0].received_bps.mean == Approx(150 * 8 * 64));
  CHECK(g[1].key == "pps-m1400");
  CHECK(g[1].runs.size() == 1);
  CHECK_FALSE(harness::is_repeated(g[1]));
  CHECK(g[2].key == "paced-m64-p10");
  CHECK(g[2].load == "10 pps");
  CHECK((g[2].runs == std::vector<std::size_t>{5, 7}));
  CHECK(g[3].load == "20 pps");
  CHECK(g[3].runs == std::vector<std::size_t>{6});
  // A rate load reads as every other figure: the unit apart ("12.5 Mbit/s", never "12.5Mbit/s").
  for (auto [rate, words] : {std::pair{"12.5M", "12.5 Mbit/s"},
                             {"100m", "100 Mbit/s"},
                             {"9G", "9 Gbit/s"},
                             {"48318382080", "48318382080 bit/s"},
                             {"500k", "500 kbit/s"}}) {
    std::vector<harness::run_summary> rated{run("rated", 64, 1, 10, true, {{"requested_rate", rate}})};
    CHECK(harness::group_repeats(rated).at(0).load == words);
  }

  const auto j = harness::to_json(g[0]);
  CHECK((j.at("runs") == nlohmann::json{"pps-m64-r1", "pps-m64-r2", "pps-m64-r3"}));
  CHECK(j.at("failed") == 1);
  CHECK(j.at("received_pps").at("n") == 2);
  CHECK(j.at("received_pps").at("ci95_low").is_number());
  CHECK(harness::to_json(g[1]).at("received_pps").at("ci95_low").is_null());

  // The reports: a CSV row per figure of the repeated groups with >= 2 ok runs, a section in report.md.
  const std::string csv = harness::summary_csv(runs);
  CHECK(csv.find("\"pps-m64\",\"pps\",\"device as server\",fan-in,UDP_STREAM,64,\"MEAN\",,,,true,,,151.500,150.000,") !=
        std::string::npos);
  for (const char* row : {"\"SD\"", "\"MIN\"", "\"MAX\"", "\"CI95_LOW\"", "\"CI95_HIGH\""})
    CHECK(csv.find(fmt::format("\"pps-m64\",\"pps\",\"device as server\",fan-in,UDP_STREAM,64,{}", row)) !=
          std::string::npos);
  CHECK(csv.find("\"pps-m1400\",\"pps\",\"device as server\",fan-in,UDP_STREAM,1400,\"MEAN\"") == std::string::npos);
  const std::string md = harness::repeats_markdown(runs);
  CHECK(md.find("## Repeats") != std::string::npos);
  CHECK(md.find("| pps-m64 | device as server | 64 | 2 (1 failed) | 150 ± 71 | 100 | 200 |") != std::string::npos);
  CHECK(harness::repeats_console(runs).find("pps-m64") != std::string::npos);
  CHECK(harness::repeats_markdown({run("pps", 64, 1, 100)}).empty());
}

TEST_CASE("stats: a pair's route stays in its group, the repeat number leaves the key", "[harness][stats]") {
  auto pair = [](int repeat, const std::string& from, const std::string& to) {
    auto s = run("tcp", 16, repeat, 10);
    s.run.topo = harness::topology::pairs;
    s.run.role = "pairs";
    s.run.id = fmt::format("tcp-m16-r{}-{}-to-{}", repeat, from, to);
    harness::instance_record i;
    i.client = from;
    i.server = to;
    s.run.instances.push_back(i);
    return s;
  };
  const auto g = harness::group_repeats({pair(1, "a", "b"), pair(1, "b", "a"), pair(2, "a", "b"), pair(2, "b", "a")});
  REQUIRE(g.size() == 2);
  CHECK(g[0].key == "tcp-m16-a-to-b");
  CHECK(g[0].route == "a -> b");
  CHECK((g[0].runs == std::vector<std::size_t>{0, 2}));
  CHECK(g[1].key == "tcp-m16-b-to-a");
}

TEST_CASE("compare: Welch's interval gives better, worse, no difference, or no interval", "[harness][stats][compare]") {
  const auto base = group("pps", {1000, 1010, 990});
  auto judge = [&](std::vector<double> b) { return harness::compare_groups({base}, {group("pps", b)}).rows.at(0); };

  const auto up = judge({1200, 1210, 1190});
  CHECK(up.judged == verdict::better);
  CHECK(up.pps.low > 0);
  CHECK(up.pps_change == Approx(20));
  CHECK(up.verdict_text == "better");
  CHECK(judge({800, 810, 790}).judged == verdict::worse);
  const auto same = judge({1005, 995, 1020, 980});
  CHECK(same.judged == verdict::no_difference);
  CHECK(same.pps.low < 0);
  CHECK(same.pps.high > 0);
  CHECK(same.verdict_text == "no difference the repeats can show");
  const auto single = judge({5000});  // far above, but one run has no interval
  CHECK(single.judged == verdict::one_run);
  CHECK_FALSE(single.pps.has_interval);
  CHECK(single.verdict_text == "one run: no interval");

  // Welch's figures by hand: means 1000 and 1200, sd 10 both, n 3: se = sqrt(200/3), dof 4, t 2.776.
  const double se = std::sqrt(200.0 / 3);
  CHECK(up.pps.dof == Approx(4));
  CHECK(up.pps.low == Approx(200 - 2.776 * se).epsilon(1e-4));
  CHECK(up.pps.high == Approx(200 + 2.776 * se).epsilon(1e-4));
}

TEST_CASE("compare: measurements matched by test, size and load, the rest listed", "[harness][stats][compare]") {
  std::vector<harness::run_summary> a{run("pps", 64, 1, 100), run("pps", 64, 2, 110), run("pps", 1400, 1, 50)};
  std::vector<harness::run_summary> b{run("pps", 64, 1, 105), run("pps", 64, 2, 101), run("bps", 64, 1, 7)};
  const auto c = harness::compare_groups(harness::group_repeats(a), harness::group_repeats(b));
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].a.key == "pps-m64");
  CHECK(c.rows[0].b.key == "pps-m64");
  CHECK(c.only_in_a == std::vector<std::string>{"pps-m1400"});
  CHECK(c.only_in_b == std::vector<std::string>{"bps-m64"});

  std::vector<harness::comparison> all{c};
  all[0].a_name = "results/a";
  all[0].b_name = "results/b";
  const std::string md = harness::compare_markdown(all);
  CHECK(md.find("- only in A: pps-m1400") != std::string::npos);
  CHECK(md.find("- only in B: bps-m64") != std::string::npos);
  CHECK(md.find("| pps | device as server | 64 | 105 ± 64 | 103 ± 25 | -1.90 % |") != std::string::npos);
  const auto j = harness::to_json(all);
  CHECK(j.at("comparisons").at(0).at("rows").at(0).at("verdict") == "no difference the repeats can show");
  CHECK(harness::compare_console(all).find("only in B: bps-m64") != std::string::npos);

  // A failed side: no figures, never better or worse.
  std::vector<harness::run_summary> failed{run("pps", 64, 1, 0, false), run("pps", 64, 2, 0, false)};
  const auto f = harness::compare_groups(harness::group_repeats(a), harness::group_repeats(failed));
  REQUIRE(f.rows.size() == 1);
  CHECK(f.rows[0].judged == verdict::no_ok_run);
  CHECK(std::isnan(f.rows[0].pps_change));
  const auto fj = harness::to_json(f.rows[0]);
  CHECK(fj.at("received_pps").at("diff").is_null());
  CHECK(fj.at("verdict") == "no ok run");
  CHECK(harness::to_json(f.rows[0].b.received_pps).at("mean").is_null());
}

TEST_CASE("report: thousands separated by a space", "[harness][stats]") {
  CHECK(harness::fmt_thousands(0) == "0");
  CHECK(harness::fmt_thousands(999) == "999");
  CHECK(harness::fmt_thousands(1000) == "1 000");
  CHECK(harness::fmt_thousands(1234567.4) == "1 234 567");
  CHECK(harness::fmt_thousands(-12345) == "-12 345");
  // The run tables' pps as the repeats' and compare's: never "99991" beside "99 994".
  CHECK(harness::fmt_pps(99991.2) == "99 991");
}
