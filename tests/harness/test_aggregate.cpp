// Aggregation from instance records: sums, the steady-state window, start skew, and failures that
// never turn into numbers.
#include "harness/report/html/html.hpp"
#include "harness/report/model/aggregate.hpp"
#include "harness/report/model/skew.hpp"
#include "harness/report/report.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

namespace {

// A result as netload would report it: `seconds` of sending at `pps`, with per-second intervals.
nb::test_result result(double t0, double start_offset, std::uint64_t pps, int seconds) {
  nb::test_result r;
  r.ok = true;
  r.message_size = 100;
  r.requested_start = t0;
  r.actual_start = t0 + start_offset;
  const auto start_ns = static_cast<std::int64_t>(t0 * 1e9);
  for (int k = 0; k < seconds; ++k) {
    nb::interval_figures i;
    i.index = static_cast<std::uint32_t>(k);
    i.start_ns = start_ns + k * 1'000'000'000LL;
    i.end_ns = i.start_ns + 1'000'000'000LL;
    i.sent_packets = i.received_packets = pps;
    i.sent_bytes = i.received_bytes = pps * 100;
    i.complete = true;
    r.intervals.push_back(i);
  }
  r.sender.packets = r.receiver.packets = pps * static_cast<std::uint64_t>(seconds);
  r.sender.bytes = r.receiver.bytes = r.sender.packets * 100;
  r.sender.seconds = r.receiver.seconds = seconds;
  nb::compute_rates(r.sender);
  nb::compute_rates(r.receiver);
  nb::reconcile(r, 0, 0);
  return r;
}

harness::run_record run_of(std::initializer_list<nb::test_result> results) {
  harness::run_record r;
  r.id = "t";
  r.t0 = 1000.0;
  r.warmup = 1;
  r.interval = 1;
  int n = 0;
  for (const auto& res : results) {
    harness::instance_record i;
    i.name = "i" + std::to_string(++n);
    i.exit_code = 0;
    i.result = res;
    r.instances.push_back(i);
  }
  return r;
}

}  // namespace

TEST_CASE("harness aggregate: sum, steady state and start skew", "[harness][aggregate]") {
  const auto s = harness::summarize(run_of({result(1000, 0.001, 1000, 4), result(1000, 0.004, 3000, 4)}));
  REQUIRE(s.ok);
  CHECK(s.sender.packets == 16000);
  CHECK(s.sender.pps == Approx(4000));
  CHECK(s.receiver.bps == Approx(4000 * 800));
  CHECK(s.start_skew_ms == Approx(3).margin(1e-6));
  CHECK(s.max_start_offset_ms == Approx(4).margin(1e-6));
  REQUIRE(s.steady);
  CHECK(s.steady->slots == 3);  // warm-up second left out
  CHECK(s.steady->receiver.pps == Approx(4000));
}

TEST_CASE("harness aggregate: a failed instance fails the run, with its reason and no figures",
          "[harness][aggregate]") {
  auto bad = result(1000, 0.001, 1000, 3);
  bad.ok = false;
  bad.error = "connection refused";
  const auto s = harness::summarize(run_of({result(1000, 0.001, 1000, 3), bad}));
  CHECK_FALSE(s.ok);
  REQUIRE(s.failures.size() == 1);
  CHECK(s.failures[0] == "i2: netload failed: connection refused");
  CHECK(s.sender.packets == 0);
  CHECK_FALSE(s.steady);
}

TEST_CASE("harness aggregate: unreconciled counts are a failure", "[harness][aggregate]") {
  auto lossy = result(1000, 0.001, 1000, 3);
  lossy.receiver.packets += 5;  // more received than sent: cannot reconcile
  nb::reconcile(lossy, 0, 0);
  const auto s = harness::summarize(run_of({result(1000, 0.001, 1000, 3), lossy}));
  CHECK_FALSE(s.ok);
  REQUIRE(s.failures.size() == 1);
  CHECK(s.failures[0].rfind("i2: counts do not reconcile", 0) == 0);
  CHECK(harness::run_status(s) == "failed");
}

TEST_CASE("harness aggregate: a late start marks the run skewed, its figures summed", "[harness][aggregate]") {
  auto r = run_of({result(1000, 0.050, 1000, 4), result(1000, 0.001, 3000, 4)});
  r.spec = nlohmann::json::object();
  const auto s = harness::summarize(r);
  REQUIRE(s.ok);
  CHECK(s.failures.empty());
  REQUIRE(s.skewed());
  REQUIRE(s.late.size() == 1);
  CHECK(s.late[0].instance == "i1");
  CHECK(s.late[0].offset_ms == Approx(50).margin(1e-6));
  CHECK(s.sender.packets == 16000);  // the late instance's figures count
  CHECK(s.max_start_offset_ms == Approx(50).margin(1e-6));
  CHECK(harness::run_state(s) == "SKEWED");
  CHECK(harness::late_words(s) == "i1 started 50.0 ms after T0 (start-skew bound 20 ms)");
  CHECK(harness::folder_skews({s}) ==
        std::vector<std::string>{"run t skewed: i1 started 50.0 ms after T0 (start-skew bound 20 ms)"});
  const auto j = harness::to_json(s);
  CHECK(j.at("status") == "skewed");
  CHECK(j.at("ok") == true);
  CHECK(j.at("sum").at("sender").at("packets") == 16000);
  CHECK(j.at("skew").at("bound_ms") == 20.0);
  CHECK(j.at("skew").at("late").at(0).at("instance") == "i1");
  CHECK(j.at("instances").at(0).at("late") == true);
  CHECK(j.at("instances").at(1).at("late") == false);
  // Within the bound: no mark.
  r = run_of({result(1000, 0.019, 1000, 4), result(1000, 0.001, 1000, 4)});
  r.spec = nlohmann::json::object();
  const auto on_time = harness::summarize(r);
  CHECK_FALSE(on_time.skewed());
  CHECK(harness::run_status(on_time) == "ok");
  CHECK(harness::to_json(on_time).at("skew").at("late").empty());
}

TEST_CASE("harness aggregate: a late instance's first and last samples are out of the steady window",
          "[harness][aggregate]") {
  // Started 1.2 s late: no sample before the third saw it send the whole second; its sender ran 1.2 s
  // past the end, counted in its last sample only.
  auto late = result(1000, 1.2, 1000, 6);
  late.intervals[0].sent_packets = late.intervals[0].received_packets = 0;
  late.intervals[1].sent_packets = late.intervals[1].received_packets = 800;
  late.intervals[5].sent_packets += 1200;
  auto r = run_of({late, result(1000, 0.001, 1000, 6)});
  r.warmup = 0;
  const auto s = harness::summarize(r);
  REQUIRE(s.skewed());
  REQUIRE(s.steady);
  CHECK(s.steady->slots == 3);  // samples 2, 3 and 4
  CHECK(s.steady->sender.packets == s.steady->receiver.packets);
  CHECK(s.steady->receiver.pps == Approx(2000));
  r.instances[0].result->actual_start = 1000 + 4.5;  // later than the samples left: none
  const auto none = harness::summarize(r);
  CHECK_FALSE(none.steady);
  CHECK(none.steady_note.find("the latest start, 4500.0 ms after T0") != std::string::npos);
}

TEST_CASE("harness aggregate: raw records round-trip through JSON", "[harness][aggregate]") {
  auto run = run_of({result(1000, 0.001, 1000, 2)});
  const auto j = harness::to_json(run.instances[0]);
  const auto back = harness::instance_from_json(j);
  REQUIRE(back.result);
  CHECK(back.result->sender.packets == 2000);
  CHECK(back.name == "i1");
}

TEST_CASE("harness aggregate: a raw record missing a field or carrying an unknown one is an error naming it",
          "[harness][aggregate]") {
  auto run = run_of({result(1000, 0.001, 1000, 2)});
  const auto j = harness::to_json(run.instances[0]);
  auto old = j;
  old.erase("samples");  // written before the live samples were kept
  CHECK(harness::instance_from_json(old).name == "i1");
  auto missing = j;
  missing.erase("exit_code");
  CHECK_THROWS_WITH(harness::instance_from_json(missing), "instance: field 'exit_code' is missing");
  auto unknown = j;
  unknown["exitcode"] = 0;
  CHECK_THROWS_WITH(harness::instance_from_json(unknown), "instance: field 'exitcode' is not a known field");
  auto sampled = j;  // a live sample as the harness keeps it: netload's interval line
  sampled["samples"] = nlohmann::json::array({nb::to_json(run.instances[0].result->intervals[0])});
  sampled["samples"][0]["type"] = "interval";
  CHECK(harness::intervals_of(harness::instance_from_json(sampled)).size() == 2);  // the result's own
  sampled["samples"][0].erase("received_bytes");
  CHECK_THROWS_WITH(harness::instance_from_json(sampled), "interval: field 'received_bytes' is missing");
  sampled["samples"][0] = 5;
  CHECK_THROWS_WITH(harness::instance_from_json(sampled), Catch::Contains("not a netload interval line"));
  auto typed = j;
  typed["timed_out"] = "no";
  CHECK_THROWS_WITH(harness::instance_from_json(typed), "instance: field 'timed_out' must be a boolean");

  const nlohmann::json spec = {{"id", "r"},
                               {"test", "t"},
                               {"role", "device as server"},
                               {"topology", "fan-in"},
                               {"kind", "UDP_STREAM"},
                               {"message_size", 64u},
                               {"repeat", 1},
                               {"duration", 10.0},
                               {"warmup", 1.0},
                               {"interval", 1.0},
                               {"skew_bound_ms", 20.0},
                               {"instances", nlohmann::json::array()},
                               {"order", 0},
                               {"t0", 1000.0}};  // the fields of the first runs' run.json
  CHECK(harness::run_from_json(spec).duration == 10.0);
  auto no_kind = spec;
  no_kind.erase("kind");
  CHECK_THROWS_WITH(harness::run_from_json(no_kind), "run: field 'kind' is missing");
  auto extra = spec;
  extra["lead"] = 2.0;
  CHECK_THROWS_WITH(harness::run_from_json(extra), "run: field 'lead' is not a known field");
}

TEST_CASE("harness aggregate: samples not aligned on wall clock give no steady state, with the reason",
          "[harness][aggregate]") {
  auto shifted = result(1000, 0.001, 1000, 4);
  for (auto& i : shifted.intervals) {  // this instance's seconds are 300 ms off the others'
    i.start_ns += 300'000'000;
    i.end_ns += 300'000'000;
  }
  const auto s = harness::summarize(run_of({result(1000, 0.001, 1000, 4), shifted}));
  REQUIRE(s.ok);
  CHECK_FALSE(s.steady);
  CHECK(s.steady_note == "sample 1 starts 300.0 ms apart across instances: not aligned on wall clock");
}

TEST_CASE("harness aggregate: a sample missing one side's count is never read as zero", "[harness][aggregate]") {
  auto last_missing = result(1000, 0.001, 1000, 4);
  last_missing.intervals[3].complete = false;  // the server's last sample never arrived
  last_missing.intervals[3].received_packets = 0;
  auto s = harness::summarize(run_of({result(1000, 0.001, 1000, 4), last_missing}));
  REQUIRE(s.steady);
  CHECK(s.steady->slots == 2);  // warm-up second and the incomplete last second left out
  CHECK(s.steady->receiver.pps == Approx(2000));

  auto hole = result(1000, 0.001, 1000, 4);
  hole.intervals[2].complete = false;
  hole.intervals[2].received_packets = 0;
  s = harness::summarize(run_of({result(1000, 0.001, 1000, 4), hole}));
  CHECK_FALSE(s.steady);
  CHECK_THAT(s.steady_note, Catch::Contains("sample 2 is missing one side's count"));
}

TEST_CASE("harness aggregate: with --allow-offset a host's instants are put back on the harness's clock",
          "[harness][aggregate]") {
  // i2's host is 2 s ahead: it was given T0 + 2 s, started then by its clock, and its intervals say so.
  auto ahead = result(1002, 0.002, 1000, 3);
  auto run = run_of({result(1000, 0.001, 1000, 3), ahead});
  run.instances[0].client = "right";
  run.instances[1].client = "fast";
  SECTION("without the offsets in run.json it started 2 s late") {
    const auto s = harness::summarize(run);
    REQUIRE(s.late.size() == 1);
    CHECK(s.late[0].instance == "i2");
    CHECK(s.late[0].offset_ms == Approx(2002).margin(1e-3));
  }
  SECTION("with them it started 1 ms after i1, and the steady state spans both") {
    run.spec = {{"clock_offsets_ms", {{"fast", 2000.0}, {"right", 0.0}}}};
    const auto s = harness::summarize(run);
    CHECK(s.ok);
    CHECK(s.start_skew_ms == Approx(1.0).margin(1e-3));
    CHECK(s.steady);
  }
}

TEST_CASE("harness reports: TCP runs gain retransmits, RTT, MSS and path MTU columns - UDP runs do not",
          "[harness][aggregate][tcp_info]") {
  auto tcp_result = [](std::uint64_t retransmits, std::uint32_t rtt_us) {
    nb::test_result r = result(1000, 0.001, 1000, 4);
    r.kind = nb::test_kind::tcp_stream;
    nb::tcp_sample s;
    s.retransmits = retransmits;
    s.rtt_us = rtt_us;
    s.snd_mss = 1448;
    s.pmtu = 1500;
    r.tcp = nb::summarize({s});
    return r;
  };
  auto run = run_of({tcp_result(7, 18000), tcp_result(5, 20000)});
  run.kind = nb::test_kind::tcp_stream;
  const auto s = harness::summarize(run);
  REQUIRE(s.ok);
  const std::string console = harness::console_summary({s});
  CHECK_THAT(console, Catch::Contains("retransmits") && Catch::Contains("RTT us") && Catch::Contains("PMTU"));
  CHECK_THAT(console, Catch::Contains("18000") && Catch::Contains("20000"));
  // The sum row: 12 retransmits over the two instances, their mean RTT, the smallest MSS and MTU.
  CHECK_THAT(harness::run_table(s).markdown(), Catch::Contains("| 12 | 19000 | 1448 | 1500 |"));
  CHECK_THAT(harness::report_markdown({s}, {}, "/nonexistent"), Catch::Contains("| 7 | 18000 | 1448 | 1500 |"));

  auto pairs = s;
  pairs.run.topo = harness::topology::pairs;
  CHECK_THAT(harness::report_markdown({pairs}, {}, "/nonexistent"),
             Catch::Contains("| retransmits | RTT us | MSS | PMTU |"));
  CHECK_THAT(harness::report_html({pairs}, {}, "/nonexistent"), Catch::Contains(">path MTU</th>"));

  const auto udp = harness::summarize(run_of({result(1000, 0.001, 1000, 4)}));
  CHECK_THAT(harness::console_summary({udp}), !Catch::Contains("retransmits"));
  CHECK_THAT(harness::report_markdown({udp}, {}, "/nonexistent"), !Catch::Contains("RTT"));
}

TEST_CASE("harness report: a bidirectional run's reverse rows say where the data went", "[harness][report][bidir]") {
  harness::run_record r;
  harness::instance_record i;
  i.client = "a";
  i.server = "b";
  r.spec = {{"direction", "forward"}};
  CHECK(harness::data_route(r, i) == std::pair<std::string, std::string>{"a", "b"});
  r.spec = {{"direction", "reverse"}};  // netload on a received what b's netserve sent
  CHECK(harness::data_route(r, i) == std::pair<std::string, std::string>{"b", "a"});
  r.spec = nlohmann::json();  // an older run.json, or none: as before
  CHECK(harness::data_route(r, i) == std::pair<std::string, std::string>{"a", "b"});
}

TEST_CASE(
    "harness reports: the limit line gives the run's loss summed over its instances, and names whose verdict "
    "text it quotes",
    "[harness][aggregate][limit]") {
  // Two instances ran into the path, losing very different shares: 12 of 4000 and 3000 of 4000.
  auto lossy = [](std::uint64_t lost) {
    nb::test_result r = result(1000, 0.001, 1000, 4);
    r.receiver.packets -= lost;
    r.receiver.bytes = r.receiver.packets * 100;
    nb::compute_rates(r.receiver);
    nb::reconcile(r, 0, 0);
    r.verdict = nb::limit_verdict{"path", fmt::format("path loss: {} of {} ({:.2f} %) lost between the sockets", lost,
                                                      r.sender.packets, r.loss.percent)};
    return r;
  };
  auto run = run_of({lossy(12), lossy(3000)});
  run.spec = nlohmann::json::object();
  const auto s = harness::summarize(run);
  REQUIRE(s.ok);
  CHECK(s.lost == 3012);
  const std::string words = harness::limit_words(s);
  CHECK(words ==
        "path (2 of 2 instances); the run, summed over its instances: 3012 of 8000 sent lost (37.65 %: 3012 on "
        "the path, 0 by the receiving sockets); instance i1's own verdict: path loss: 12 of 4000 (0.30 %) lost "
        "between the sockets");
  const std::string line =
      "path (2 of 2 instances); the run, summed over its instances: 3012 of 8000 sent lost (37.65 %";
  CHECK_THAT(harness::console_summary({s}), Catch::Contains("  limit: " + line));
  CHECK_THAT(harness::report_markdown({s}, {}, "/nonexistent"), Catch::Contains("**Limit**: " + line));
  CHECK_THAT(harness::report_html({s}, {}, "/nonexistent"), Catch::Contains("<b>Limit</b>: " + line));
  CHECK(harness::to_json(s)["limit"]["text_of_instance"] == "i1");
}
