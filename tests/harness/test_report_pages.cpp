// The reports of a results folder built by hand, as the runner leaves it: a plan stopped by a signal
// (an interrupted run with partial instance files, the runs after it never started), and what
// report.html must be to hand on: open sections, a print stylesheet, counts that say what they count, the
// emulated circuit's explanation, and a log axis where a rate search's trials span decades.
#include "harness/report/html/charts.hpp"
#include "harness/report/html/html.hpp"
#include "harness/report/report.hpp"
#include "harness/report/results.hpp"

#include "tests/support/temp_file.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr double t0 = 1'800'000'000.0;

struct folder {
  folder() {
    char tmpl[] = "/tmp/netbench-report-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir = fs::path(tmpl) / "lab-20261203T080000Z";
    fs::create_directories(dir / "raw");
  }
  ~folder() { fs::remove_all(dir.parent_path()); }
  void write(const fs::path& rel, const json& j) const {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << j.dump(2);
  }
  fs::path dir;
};

json run_json(const std::string& id, int order, std::uint32_t size) {
  json instances = json::array();
  for (const char* name : {"i1", "i2", "i3"})
    instances.push_back({{"name", name},
                         {"client", name},
                         {"client_address", "198.19.0.2"},
                         {"server", "device"},
                         {"server_address", "198.18.0.2"},
                         {"category", ""},
                         {"reverse", false}});
  return {{"id", id},
          {"test", "pps-bps"},
          {"role", "device as server"},
          {"topology", "fan-in"},
          {"kind", "UDP_STREAM"},
          {"message_size", size},
          {"repeat", 1},
          {"duration", 30.0},
          {"warmup", 2.0},
          {"interval", 1.0},
          {"skew_bound_ms", 20.0},
          {"instances", instances},
          {"requested_pps", nullptr},
          {"requested_rate", nullptr},
          {"search_trial", nullptr},
          {"bidirectional", false},
          {"probe", nullptr},
          {"order", order},
          {"t0", t0}};
}

// netload's result after a signal: the counts until the stop, marked interrupted with the seconds measured.
json partial_result(std::uint64_t sent, std::uint64_t received, double seconds) {
  nb::test_result r;
  r.ok = true;
  r.interrupted = nb::interruption{"SIGINT", seconds, 30};
  r.message_size = 64;
  r.requested_start = r.actual_start = t0;
  r.sender.packets = sent;
  r.sender.bytes = sent * 64;
  r.receiver.packets = received;
  r.receiver.bytes = received * 64;
  r.sender.seconds = r.receiver.seconds = seconds;
  nb::compute_rates(r.sender);
  nb::compute_rates(r.receiver);
  nb::reconcile(r, 0, 0);  // a partial result reconciles as any other: what was sent and not received is lost
  return nb::to_json(r);
}

json instance_file(const std::string& name, json result, json samples = json::array()) {
  return {{"instance", name},
          {"client", name},
          {"server", "device"},
          {"client_address", "198.19.0.2"},
          {"server_address", "198.18.0.2"},
          {"category", ""},
          {"exit_code", 1},
          {"timed_out", false},
          {"error", ""},
          {"stderr", ""},
          {"result", std::move(result)},
          {"samples", std::move(samples)}};
}

// Live per-second samples of an instance whose netload left no result: 2 s at 1000 pps, 900 received.
json live_samples() {
  json out = json::array();
  for (int k = 0; k < 2; ++k) {
    const auto start = static_cast<std::int64_t>(t0 * 1e9) + k * 1'000'000'000LL;
    out.push_back({{"type", "interval"},
                   {"index", k},
                   {"start_ns", start},
                   {"end_ns", start + 1'000'000'000LL},
                   {"sent_packets", 1000},
                   {"sent_bytes", 64000},
                   {"received_packets", 900},
                   {"received_bytes", 57600},
                   {"complete", true}});
  }
  return out;
}

std::string read(const fs::path& p) { return nb::test::read_text(p.string()); }

}  // namespace

TEST_CASE(
    "an interrupted plan: the run shows as interrupted with the seconds and what was measured, never a bare "
    "FAILED",
    "[report][interrupted]") {
  folder f;
  f.write("environment.json", {{"plan", "lab"},
                               {"harness_version", "0.3.0"},
                               {"interrupted", true},
                               {"planned_runs", {"pps-bps-m64", "pps-bps-m1400"}}});
  json spec = run_json("pps-bps-m64", 0, 64);
  spec["interrupted"] = true;
  spec["measured_s"] = 12.5;
  spec["error"] = "interrupted after 12 s of the run's 30 s";
  f.write("raw/pps-bps-m64/run.json", spec);
  // i1 and i2: netload's partial results (10 000 sent, 8 000 received, and 15 000 / 15 000 over 12.5 s);
  // i3's netload left no result, only the samples the harness received live.
  f.write("raw/pps-bps-m64/i1.json", instance_file("i1", partial_result(10000, 8000, 12.5)));
  f.write("raw/pps-bps-m64/i2.json", instance_file("i2", partial_result(15000, 15000, 12.5)));
  f.write("raw/pps-bps-m64/i3.json", instance_file("i3", nullptr, live_samples()));

  const auto runs = harness::write_reports(f.dir);
  REQUIRE(runs.size() == 1);
  const harness::run_summary& s = runs[0];
  CHECK_FALSE(s.ok);
  CHECK(s.run.interrupted);
  REQUIRE(s.measured);
  CHECK(s.measured_instances == 3);
  CHECK(s.measured->sender.packets == 27000);
  CHECK(s.measured->receiver.packets == 24800);
  CHECK(s.measured->sender.pps == Approx(800 + 1200 + 1000));
  const std::string state = "INTERRUPTED after 12.5 s of the run's 30 s";
  CHECK(harness::run_state(s) == state);

  const std::string console = harness::console_summary(runs);
  CHECK_THAT(console, Catch::Contains("pps-bps-m64  [device as server UDP_STREAM -m 64, fan-in]  " + state));
  CHECK_THAT(console, Catch::Contains("UNTIL STOP  3 of 3 instances"));
  CHECK_THAT(console, Catch::Contains("until stop: 12.5 s"));        // i1's row: its partial figures
  CHECK_THAT(console, Catch::Contains("800  "));                     // i1's 10 000 sent in 12.5 s
  CHECK_THAT(console, Catch::Contains("3 000     2 740"));           // sent and received pps, summed
  CHECK_THAT(console, Catch::Contains("8.148  n/a      " + state));  // the summary row: loss and state
  CHECK_THAT(console, !Catch::Contains("FAILED"));

  const std::string md = read(f.dir / "report.md");
  CHECK_THAT(md, Catch::Contains("**Interrupted**: the plan was stopped by a signal"));
  CHECK_THAT(md, Catch::Contains("— **" + state + "**"));
  CHECK_THAT(md, Catch::Contains("Interrupted after 12.5 s of the run's 30 s. Until the stop, 3 of 3 instances counted "
                                 "27000 packets sent and 24800 received"));
  CHECK_THAT(md, !Catch::Contains("FAILED"));

  const json summary = json::parse(read(f.dir / "summary.json"));
  const json& run = summary.at("runs").at(0);
  CHECK(run.at("interrupted") == true);
  CHECK(run.at("measured_s") == 12.5);
  CHECK(run.at("until_stop").at("sender").at("packets") == 27000);
  CHECK(run.at("instances").at(2).at("until_stop").at("receiver").at("packets") == 1800);

  const std::string page = harness::report_html(runs, {}, f.dir);
  CHECK_THAT(page, Catch::Contains("<p class=\"banner\"><b>Interrupted</b>: the plan was stopped by a signal"));
  CHECK_THAT(page, Catch::Contains("1 run: <span class=\"bad\">1 interrupted</span>"));
  CHECK_THAT(page, Catch::Contains("<span class=\"bad\">" + harness::html::escape(state) + "</span></h3>"));
  CHECK_THAT(page, Catch::Contains("<td>UNTIL STOP</td>"));
  CHECK_THAT(page, Catch::Contains("run pps-bps-m1400 not run: stopped by a signal before it began"));
  CHECK_THAT(page, !Catch::Contains("FAILED"));
  // The per-second samples of the interrupted run make its timeline.
  CHECK_THAT(page, Catch::Contains("data-chart=\"timeline\""));
}

TEST_CASE("the runs a stop prevented are listed in report.md, summary.json and summary.csv as on the page",
          "[report][interrupted]") {
  folder f;
  f.write("environment.json", {{"plan", "lab"},
                               {"harness_version", "0.3.0"},
                               {"interrupted", {{"signal", 15}, {"at_utc", "1764547200.000"}}},
                               {"planned_runs", {"pps-bps-m64", "pps-bps-m1400", "pps-bps-m9000"}}});
  json spec = run_json("pps-bps-m64", 0, 64);
  spec["interrupted"] = true;
  spec["measured_s"] = 12.5;
  f.write("raw/pps-bps-m64/run.json", spec);
  f.write("raw/pps-bps-m64/i1.json", instance_file("i1", partial_result(10000, 8000, 12.5)));
  const auto runs = harness::write_reports(f.dir);
  const std::string why = "stopped by SIGTERM before it began";

  const std::string md = read(f.dir / "report.md");
  CHECK_THAT(md, Catch::Contains("## Not run\n\n- pps-bps-m1400: **not run**: " + why +
                                 "\n- pps-bps-m9000: **not run**: " + why + "\n"));
  const json summary = json::parse(read(f.dir / "summary.json"));
  CHECK(summary.at("not_run") ==
        json::array({{{"run", "pps-bps-m1400"}, {"why", why}}, {{"run", "pps-bps-m9000"}, {"why", why}}}));
  const std::string csv = read(f.dir / "summary.csv");
  CHECK_THAT(csv, Catch::Contains("\"pps-bps-m1400\",,,,,,\"NOT RUN: " + why + "\",,,,false,,,,,,,,,,,\n"));
  CHECK_THAT(csv, Catch::Contains("\"pps-bps-m9000\",,,,,,\"NOT RUN: " + why + "\","));
  // Every row as wide as the header.
  std::istringstream lines(csv);
  std::string header, row;
  std::getline(lines, header);
  while (std::getline(lines, row))
    CHECK(std::count(row.begin(), row.end(), ',') == std::count(header.begin(), header.end(), ','));
  CHECK_THAT(harness::report_html(runs, {}, f.dir), Catch::Contains("run pps-bps-m9000 not run: " + why));
}

TEST_CASE("report.html is a page to hand on: open sections, a print stylesheet, counts in words, the circuit explained",
          "[report][html]") {
  folder f;
  f.write("environment.json", {{"plan", "lab"}, {"harness_version", "0.3.0"}, {"planned_runs", {"a-m64", "b-m64"}}});
  for (const auto& [id, order] : {std::pair{"a-m64", 0}, std::pair{"b-m64", 1}}) {
    json spec = run_json(id, order, 64);
    spec["circuit"] = {{"limit_dropped", 1200}, {"shaper_dropped", 0}, {"udp_delivered", 4800}};
    f.write(fs::path("raw") / id / "run.json", spec);
    for (const char* name : {"i1", "i2", "i3"}) {
      nb::test_result r;
      r.ok = true;
      r.message_size = 64;
      r.requested_start = r.actual_start = t0;
      r.sender.packets = 2000;
      r.receiver.packets = 1600;
      r.sender.seconds = r.receiver.seconds = 2;
      nb::compute_rates(r.sender);
      nb::compute_rates(r.receiver);
      nb::reconcile(r, 0, 0);
      json file = instance_file(name, nb::to_json(r));
      file["exit_code"] = 0;
      f.write(fs::path("raw") / id / (std::string(name) + ".json"), file);
    }
  }
  const auto runs = harness::write_reports(f.dir);
  const std::string page = harness::report_html(runs, {}, f.dir);
  CHECK_THAT(page, Catch::Contains(", 2 runs: <span class=\"good\">every one ok</span>"));
  CHECK_THAT(page, !Catch::Contains("run(s)") && !Catch::Contains("search(es)"));
  CHECK_THAT(page, !Catch::Contains("<details"));  // nothing a click away: it would not print either
  CHECK_THAT(page, Catch::Contains("<section class=\"run\" id=\"run-a-m64\">"));
  CHECK_THAT(page, Catch::Contains("@media print"));
  const std::string circuit =
      "Circuit (emulated): its packet-rate limit dropped 1200 packets and its bit-rate shaper 0; "
      "the receiving hosts&#39; kernels delivered 4800 UDP datagrams. Sent - received = 1200";
  CHECK_THAT(page, Catch::Contains(circuit));
  CHECK_THAT(read(f.dir / "report.md"),
             Catch::Contains("Circuit (emulated): its packet-rate limit dropped 1200 packets"));
}

TEST_CASE("a rate search whose unpaced trial is decades above its paced ones is drawn on a log axis, and says so",
          "[report][charts]") {
  json trials = json::array();
  auto trial = [&](double load, double loss_ratio, bool unpaced = false) {
    trials.push_back({{"run", "s-t"},
                      {"phase", unpaced ? "mrr" : "search"},
                      {"unpaced", unpaced},
                      {"intended_load", unpaced ? json(nullptr) : json(load)},
                      {"trial_duration", 1.0},
                      {"ran", true},
                      {"offered_rate", load},
                      {"forwarding_rate", load * (1 - loss_ratio)},
                      {"loss_ratio", loss_ratio},
                      {"load_limited", false}});
  };
  trial(640000, 0.969, true);  // the unpaced trial: its senders' 640 k pps, the circuit's 20 k received
  for (double rate : {21000.0, 19400.0, 20200.0, 19800.0}) trial(rate, rate > 20000 ? 1 - 20000 / rate : 0);
  const json goal = {{"name", "NDR"}, {"loss_ratio", 0.0}, {"final_trial_duration", 1.0}};
  const json result = {
      {"name", "NDR"}, {"goal", goal}, {"relevant_lower_bound", 19800.0}, {"relevant_upper_bound", 20200.0}};
  const json search = {{"id", "s"},
                       {"search",
                        {{"mrr", trials[0]},
                         {"goal_results", {result}},
                         {"trials", trials},
                         {"load_conversion", "aggregate = per instance × 8 instances"}}}};
  const auto c = harness::search_chart(search, "c1");
  REQUIRE(c);
  REQUIRE(c->error.empty());
  CHECK_THAT(c->caption, Catch::Contains("Log scale"));
  // The log axis has its decades as tics: 10 k, 100 k and 1 M; a linear one up to 640 k has no 1 M.
  CHECK_THAT(c->svg, Catch::Contains(">10 k<") && Catch::Contains(">100 k<"));
  // The goal's bounds are marked, by name.
  CHECK_THAT(c->svg, Catch::Contains("NDR lower") && Catch::Contains("NDR upper"));
  // A search recorded by an older harness is not drawn (its search.json says what it found).
  CHECK_FALSE(
      harness::search_chart({{"id", "old"}, {"search", {{"results", json::array()}, {"trials", trials}}}}, "c2"));
}

TEST_CASE("instances that sent decades more than they received are drawn on a log axis, and it says so",
          "[report][charts]") {
  // Receive livelock on the wire-like path: 1.9 M pps sent, 34 k delivered.
  harness::run_summary s;
  s.ok = true;
  for (const char* name : {"i1", "i2"}) {
    harness::instance_record i;
    i.name = name;
    nb::test_result r;
    r.ok = true;
    r.sender.packets = 1'900'000;
    r.receiver.packets = 34'000;
    nb::reconcile(r, 0, 0);
    i.result = r;
    s.run.instances.push_back(i);
  }
  const auto c = harness::instance_chart(s, "c1");
  REQUIRE(c);
  REQUIRE(c->error.empty());
  CHECK_THAT(c->caption, Catch::Contains("Log scale (top): the figures span 56 to 1."));
  CHECK_THAT(c->svg, Catch::Contains(">100 k<") && Catch::Contains(">1 M<"));
}

TEST_CASE("a partial result's \"interrupted\" is read beside the result and written back with it",
          "[report][interrupted]") {
  harness::instance_record i;
  harness::read_result(i, partial_result(10000, 8000, 12.5));
  REQUIRE(i.result);
  CHECK(i.interrupted);
  CHECK(i.result->sender.packets == 10000);
  const json written = harness::to_json(i);
  CHECK(written.at("result").at("interrupted").at("signal") == "SIGINT");
  CHECK(written.at("result").at("interrupted").at("measured_s") == 12.5);
  CHECK(harness::instance_from_json(written).interrupted);
  harness::instance_record whole;
  harness::read_result(whole, nb::to_json(nb::test_result{}));
  CHECK_FALSE(whole.interrupted);
  CHECK(harness::to_json(whole).at("result").at("interrupted").is_null());
}
