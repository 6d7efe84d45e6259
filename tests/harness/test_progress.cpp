// The live view's pure parts (harness/run/progress.hpp): durations and times of day, the plan's ETA
// from the runs done so far, a rate search's unknown length, the lines and the block redrawn in place.
#include "harness/run/progress.hpp"

#include <catch2/catch.hpp>

using namespace harness;

TEST_CASE("durations: mm:ss under an hour, h:mm:ss from one hour", "[harness][progress]") {
  CHECK(format_duration(0) == "00:00");
  CHECK(format_duration(9.9) == "00:09");
  CHECK(format_duration(61) == "01:01");
  CHECK(format_duration(3599) == "59:59");
  CHECK(format_duration(3600) == "1:00:00");
  CHECK(format_duration(36000 + 62) == "10:01:02");
  CHECK(format_duration(-5) == "00:00");
}

TEST_CASE("the time of day, shifted to local time", "[harness][progress]") {
  const double t = 1764633600 + 3600 * 22 + 60 * 31 + 5;  // 2025-12-02 22:31:05 UTC
  CHECK(format_time_of_day(t, 0) == "22:31:05");
  CHECK(format_time_of_day(t + 0.9, 0) == "22:31:05");
  CHECK(format_time_of_day(t, 3600 * 2) == "00:31:05");    // past midnight east of Greenwich
  CHECK(format_time_of_day(t, -3600 * 23) == "23:31:05");  // the day before, far west
}

TEST_CASE("ETA: before anything ran, durations plus the prior overhead", "[harness][progress]") {
  plan_progress p({{3, false}, {3, false}, {3, false}}, 2);
  const auto e = p.eta(1000);
  CHECK_FALSE(e.search_ahead);
  CHECK(e.seconds == Approx(15));
  CHECK(p.count() == 3);
}

TEST_CASE("ETA: the overhead measured on the runs done replaces the prior", "[harness][progress]") {
  plan_progress p({{3, false}, {3, false}, {3, false}, {3, false}}, 2);
  p.start_run(0, 1000);
  CHECK(p.eta(1001).seconds == Approx(4 + 15));  // the current run: 3 + 2 - 1 s gone, then three more
  p.part_done(3, 1004, true);                    // 4 s of wall time for 3 s: 1 s overhead
  CHECK(p.eta(1004).seconds == Approx(12));      // nothing of run 1 left; three runs of 3 + 1
  p.start_run(1, 1004);
  p.part_done(3, 1010, true);  // 6 s for 3: 3 s overhead, the average is 2
  CHECK(p.overhead_s() == Approx(2));
  p.start_run(2, 1010);
  CHECK(p.index() == 2);
  CHECK(p.eta(1012).seconds == Approx(3 + 5));  // 5 - 2 s gone, and the last run
  CHECK(p.eta(1030).seconds == Approx(5));      // the current run overdue: counted as ending now
}

TEST_CASE("ETA: a run that failed before it ran gives no overhead sample", "[harness][progress]") {
  plan_progress p({{10, false}, {10, false}}, 2);
  p.start_run(0, 0);
  p.part_done(10, 0.5, false);  // its netserve did not start: 0.5 s of wall time for a 10 s run
  CHECK(p.overhead_s() == Approx(2));
  p.start_run(1, 0.5);
  CHECK(p.eta(0.5).seconds == Approx(12));
}

TEST_CASE("ETA: a rate search is not counted, and the ETA says so", "[harness][progress]") {
  plan_progress p({{3, false}, {0, true}, {3, false}}, 1);
  p.start_run(0, 0);
  auto e = p.eta(0);
  CHECK(e.search_ahead);
  CHECK(e.seconds == Approx(8));  // the two runs of known length
  p.part_done(3, 5, true);
  p.start_run(1, 5);
  p.part_done(2, 8, true);  // a trial of the search: a part, the search goes on
  e = p.eta(9);
  CHECK(e.search_ahead);
  CHECK(e.seconds == Approx(3 + 1.5));  // only the last run; the overhead is now the average, 1.5 s
  p.part_done(2, 11, true);             // its last trial: 1 s overhead again, 4/3 s on average
  p.start_run(2, 11);
  e = p.eta(11);
  CHECK_FALSE(e.search_ahead);  // the search is over
  CHECK(e.seconds == Approx(3 + 4.0 / 3));
}

TEST_CASE("the plan's line", "[harness][progress]") {
  const double now = 1764633600 + 3600 * 22 + 60 * 30;  // 22:30:00 UTC
  CHECK(plan_line("loopback", 1, 4, "bps-m1400-r1", 72, {95, false}, now, 0) ==
        "plan loopback: run 2 of 4 (bps-m1400-r1), 01:12 elapsed, ETA 01:35 (ends ~22:31:35)");
  CHECK(plan_line("loopback", 3, 4, "x", 72.9, {0.4, false}, now, 0) ==
        "plan loopback: run 4 of 4 (x), 01:12 elapsed, ETA 00:01 (ends ~22:30:01)");  // a countdown rounds up
  CHECK(plan_line("s", 0, 2, "t-s03-search", 3700, {10, true}, now, 0) ==
        "plan s: run 1 of 2 (t-s03-search), 1:01:40 elapsed, ETA 00:10 + a rate search of unknown length");
}

TEST_CASE("the aggregate line is one plain line: sent and received pps, instances running", "[harness][progress]") {
  live_totals t;
  t.running = 8;
  t.instances = 8;
  t.sent_pps = 1500;
  t.sent_bps = 12e6;
  t.recv_pps = 1400;
  t.recv_bps = 11.2e6;
  t.interval = 1;
  CHECK(
      aggregate_line("pps-m1", 1.04, 3, t) ==
      "  pps-m1   1.0/3 s (2 s left)  running 8/8 failed 0  interval 1: sent 1.50 k pps 12.00 Mbit/s  received 1.40 k "
      "pps 11.20 Mbit/s");
}

TEST_CASE("the live line never repeats an interval's figures: it says nothing new arrived, and who is behind",
          "[harness][progress]") {
  // Two paced instances: every interval has the same figures, so only its number tells the lines apart.
  const interval_rates r{1000, 1000 * 64 * 8, 1000, 1000 * 64 * 8};
  std::vector<interval_rates> a{r}, b{r};
  auto line = [&](double elapsed, int shown_before) {
    return aggregate_line("t-m64", elapsed, 4, live_aggregate({{true, false, &a}, {true, false, &b}}), shown_before);
  };
  CHECK_THAT(line(1.2, 0), Catch::Contains("interval 1: sent 2.00 k pps"));
  b.push_back(r);  // one of two has reported interval 2: the line stays on interval 1, the one both reported
  CHECK(line(2.2, 1) ==
        "  t-m64   2.2/4 s (2 s left)  running 2/2 failed 0  nothing new: interval 2 not reported yet by 1 "
        "of 2 running instance(s)");
  a.push_back(r);
  CHECK_THAT(line(3.2, 1), Catch::Contains("interval 2: sent 2.00 k pps"));
  CHECK(line(3.2, 1) != line(2.2, 0));
}

TEST_CASE("lines cut to the terminal's width, whole when it is unknown", "[harness][progress]") {
  CHECK(fit_width("abcdef", 0) == "abcdef");
  CHECK(fit_width("abcdef", 7) == "abcdef");
  CHECK(fit_width("abcdef", 6) == "abcde");
  CHECK(fit_width("ab\xc3\xa9", 4) == "ab");  // not half of the é
}

TEST_CASE("the block: drawn, redrawn over itself, cleared", "[harness][progress]") {
  live_block b;
  CHECK_FALSE(b.shown());
  CHECK(b.draw({"one", "two"}, 0) == "one\ntwo\n");
  CHECK(b.shown());
  const std::string erase2 = "\x1b[1A\x1b[2K\x1b[1A\x1b[2K";
  CHECK(b.draw({"three", "four"}, 0) == erase2 + "three\nfour\n");
  CHECK(b.clear() == erase2);
  CHECK(b.clear().empty());
  b.draw({"x"}, 0);
  b.forget();  // left on the screen as scrollback: the next drawing starts below it
  CHECK(b.draw({"y"}, 0) == "y\n");
}

TEST_CASE("the live aggregate: no rate is claimed for an interval a running instance has not reported",
          "[harness][progress]") {
  // Eight instances at 5 000 pps each: the first interval's reports arrive a little after it ends.
  const interval_rates r{5000, 5000 * 64 * 8, 4999, 4999 * 64 * 8};
  std::vector<std::vector<interval_rates>> got(8);
  auto totals = [&] {
    std::vector<instance_progress> each;
    for (const auto& g : got) each.push_back({true, false, &g});
    return live_aggregate(each);
  };
  auto t = totals();
  CHECK_FALSE(t.known);
  CHECK(aggregate_line("pps-m64", 1.0, 10, t) ==
        "  pps-m64   1.0/10 s (9 s left)  running 8/8 failed 0  sent — pps — Mbit/s  received — pps — Mbit/s");
  for (std::size_t i = 0; i < 7; ++i) got[i].push_back(r);
  CHECK_FALSE(totals().known);  // seven of eight: the sum would be 35 k, not the 40 k sent
  got[7].push_back(r);
  t = totals();
  CHECK(t.known);
  CHECK(t.interval == 1);
  CHECK(t.sent_pps == 40000);
  CHECK_THAT(aggregate_line("pps-m64", 1.2, 10, t), Catch::Contains("sent 40.00 k pps 20.48 Mbit/s"));
  // One instance a report ahead: the line stays on the interval every instance has reported.
  got[0].push_back({1, 1, 1, 1});
  t = totals();
  CHECK(t.interval == 1);
  CHECK(t.sent_pps == 40000);
}

TEST_CASE("the live aggregate: an instance that ended counts for the intervals it reported", "[harness][progress]") {
  const interval_rates r{1000, 8e6, 1000, 8e6};
  std::vector<interval_rates> ended{r}, running{r, r};
  auto t = live_aggregate({{false, true, &ended}, {true, false, &running}});
  CHECK(t.running == 1);
  CHECK(t.failed == 1);
  CHECK(t.interval == 2);
  CHECK(t.sent_pps == 1000);                                               // the failed one sent nothing in interval 2
  t = live_aggregate({{false, false, &ended}, {false, false, &running}});  // none running: the latest there is
  CHECK(t.interval == 2);
  CHECK(live_aggregate({}).known == false);
}
