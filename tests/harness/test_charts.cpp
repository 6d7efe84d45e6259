// report.html's charts from figures: names from a plan or a raw/ file stay labels (never gnuplot
// commands), runs whose samples say nothing give no chart rather than a crash, and the PPS-vs-BPS curve
// keeps apart tests that share a role.
#include "harness/report/html/charts.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

// The plot groups of an inline chart: one per curve gnuplot drew.
std::size_t plot_groups(const std::string& svg) {
  std::size_t n = 0;
  for (auto at = svg.find("class=\"gnuplot-plot\""); at != std::string::npos;
       at = svg.find("class=\"gnuplot-plot\"", at + 1))
    ++n;
  return n;
}

// One instance that sent and received `packets` over `seconds` one-second intervals from T0 = 1000.
harness::instance_record instance(const std::string& name, std::uint64_t packets, int seconds,
                                  bool zero_length = false) {
  nb::test_result t;
  t.ok = true;
  t.message_size = 64;
  t.sender.packets = t.receiver.packets = packets;
  t.sender.bytes = t.receiver.bytes = packets * 64;
  t.sender.seconds = t.receiver.seconds = seconds;
  nb::compute_rates(t.sender);
  nb::compute_rates(t.receiver);
  nb::reconcile(t, 0, 0);
  for (int k = 0; k < seconds; ++k) {
    nb::interval_figures i;
    i.index = static_cast<std::uint32_t>(k);
    i.start_ns = 1'000'000'000'000LL + k * 1'000'000'000LL;
    i.end_ns = zero_length ? i.start_ns : i.start_ns + 1'000'000'000LL;
    i.sent_packets = i.received_packets = packets / static_cast<std::uint64_t>(seconds);
    i.complete = true;
    t.intervals.push_back(i);
  }
  harness::instance_record r;
  r.name = name;
  r.client = "a";
  r.server = "device";
  r.exit_code = 0;
  r.result = t;
  return r;
}

harness::run_summary summary_of(std::vector<harness::instance_record> instances) {
  harness::run_summary s;
  s.run.id = "t-m64";
  s.run.t0 = 1000;
  s.run.interval = 1;
  s.run.instances = std::move(instances);
  s.ok = true;
  return s;
}

harness::repeat_group measured(const std::string& test, std::uint32_t size, double pps) {
  harness::repeat_group g;
  g.key = test + "-m" + std::to_string(size);
  g.test = test;
  g.role = "device as server";
  g.message_size = size;
  g.received_pps = harness::describe({pps, pps * 1.01});
  g.sent_pps = g.received_pps;
  g.received_bps = harness::describe({pps * size * 8, pps * size * 8 * 1.01});
  g.sent_bps = g.received_bps;
  return g;
}

}  // namespace

TEST_CASE("a name with a newline stays a label: it never becomes gnuplot commands", "[charts]") {
  const auto planted = std::filesystem::temp_directory_path() / "netbench-charts-planted";
  std::filesystem::remove(planted);
  const std::string hostile = "x\nEOD\nsystem 'touch " + planted.string() + "'\n$Z << EOD\n";
  auto s = summary_of({instance(hostile, 3000, 3), instance("02-b", 3000, 3)});
  s.run.instances[0].client = hostile;
  for (auto make : {harness::instance_chart, harness::cpu_chart, harness::timeline_chart}) {
    const auto c = make(s, "c1");
    if (c) CHECK(c->error.empty());
  }
  CHECK_FALSE(std::filesystem::exists(planted));
}

TEST_CASE("a run whose intervals have no length gives no timeline, and no crash", "[charts]") {
  const auto s = summary_of({instance("01-a", 3000, 3, true)});
  CHECK_FALSE(harness::timeline_chart(s, "c1"));
  const auto good = harness::timeline_chart(summary_of({instance("01-a", 3000, 3)}), "c2");
  REQUIRE(good);
  CHECK_FALSE(good->svg.empty());
}

TEST_CASE("two tests of one role at the same size are two curves, not one", "[charts]") {
  // The procedure's PPS test (-m 64) and BPS test (-m 1400) of a role make one curve...
  const auto one =
      harness::sweep_chart({measured("pps", 64, 1e6), measured("bps", 1400, 2e5)}, harness::sweep_metric::pps, "c1");
  REQUIRE(one);
  CHECK(plot_groups(one->svg) == 2);  // received and sent of one line
  // ...but two tests that both ran -m 64 and -m 1400 on the same server are two.
  const auto two = harness::sweep_chart(
      {measured("one", 64, 1e6), measured("one", 1400, 2e5), measured("two", 64, 2e6), measured("two", 1400, 4e5)},
      harness::sweep_metric::pps, "c2");
  REQUIRE(two);
  CHECK(plot_groups(two->svg) == 4);
  CHECK(two->svg.find("device as server (two) received") != std::string::npos);
}
