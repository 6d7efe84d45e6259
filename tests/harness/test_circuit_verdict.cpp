// One verdict per run, consistent with the counters the report prints (issue 39): the lab's device as
// server, eight instances unpaced at -m 1 through a circuit limited to 20 000 pps. The circuit's
// packet-rate limit dropped every lost datagram; the device's host counted no drop below the socket,
// only softirq budget squeezes. The report said "before-socket ... dropped before the socket" under a
// circuit line that gave every loss to the circuit.
#include "core/policy/verdict.hpp"
#include "harness/report/html/html.hpp"
#include "harness/report/model/circuit.hpp"
#include "harness/report/report.hpp"
#include "harness/report/results.hpp"

#include "tests/support/temp_file.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr double t0 = 1'800'000'000.0;
constexpr int instances = 8;

struct folder {
  folder() {
    char tmpl[] = "/tmp/netbench-circuit-XXXXXX";
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

std::string name_of(int k) { return fmt::format("i{}", k + 1); }

json run_json(const json& circuit) {
  json list = json::array();
  for (int k = 0; k < instances; ++k)
    list.push_back({{"name", name_of(k)},
                    {"client", name_of(k)},
                    {"client_address", fmt::format("198.19.0.{}", k + 2)},
                    {"server", "device"},
                    {"server_address", "198.18.0.2"},
                    {"category", ""},
                    {"reverse", false}});
  return {{"id", "pps-device-server-m1"},
          {"test", "pps-device-server"},
          {"role", "device as server"},
          {"topology", "fan-in"},
          {"kind", "UDP_STREAM"},
          {"message_size", 1},
          {"repeat", 1},
          {"duration", 5.0},
          {"warmup", 1.0},
          {"interval", 1.0},
          {"skew_bound_ms", 20.0},
          {"instances", list},
          {"requested_pps", nullptr},
          {"requested_rate", nullptr},
          {"search_trial", nullptr},
          {"bidirectional", false},
          {"probe", nullptr},
          {"order", 0},
          {"t0", t0},
          {"circuit", circuit}};
}

// One instance's result: `lost` of 2 750 000 sent lost, `socket_drops` of them by its socket; the device's
// host counted no drop below the socket, only 4821 softirq budget squeezes (its softnet counters are the
// whole machine's, the circuit namespace's forwarding included). Judged by netload's own verdict code.
nb::test_result instance_result(std::uint64_t lost, std::uint64_t socket_drops) {
  nb::test_result r;
  r.ok = true;
  r.message_size = 1;
  r.requested_start = r.actual_start = t0;
  r.sender.packets = r.sender.bytes = 2'750'000;
  r.receiver.packets = r.receiver.bytes = 2'750'000 - lost;
  r.sender.seconds = r.receiver.seconds = 5;
  nb::compute_rates(r.sender);
  nb::compute_rates(r.receiver);
  nb::reconcile(r, socket_drops, r.receiver.packets);
  nb::host_delta device;
  device.window_s = 5;
  device.cpus = 2;
  device.softnet_time_squeeze = 4821;
  r.hosts.receiver = device;
  r.verdict = nb::judge_limit(r);
  return r;
}

// The run's raw folder: each instance's result through `as_written` (what its netload wrote).
template <class Edit>
std::vector<harness::run_summary> reports(const folder& f, const json& circuit, std::uint64_t socket_drops,
                                          Edit as_written) {
  f.write("environment.json",
          {{"plan", "lab"}, {"harness_version", "0.3.0"}, {"planned_runs", {"pps-device-server-m1"}}});
  f.write(fs::path("raw") / "pps-device-server-m1" / "run.json", run_json(circuit));
  for (int k = 0; k < instances; ++k) {
    nb::test_result r = instance_result(k < 4 ? 276'859 : 276'860, socket_drops);
    as_written(r);
    json file = {{"instance", name_of(k)},
                 {"client", name_of(k)},
                 {"server", "device"},
                 {"client_address", fmt::format("198.19.0.{}", k + 2)},
                 {"server_address", "198.18.0.2"},
                 {"category", ""},
                 {"exit_code", 0},
                 {"timed_out", false},
                 {"error", ""},
                 {"stderr", ""},
                 {"result", nb::to_json(r)},
                 {"samples", json::array()}};
    f.write(fs::path("raw") / "pps-device-server-m1" / (name_of(k) + ".json"), file);
  }
  return harness::write_reports(f.dir);
}

std::string read(const fs::path& p) { return nb::test::read_text(p.string()); }

// The circuit of the run: every one of the 2 214 876 lost datagrams dropped by its limit, and a
// few of the tests' control packets with them.
const json lab_circuit = {{"limit_dropped", 2'214'901}, {"shaper_dropped", 0}, {"udp_delivered", 19'785'200}};

const std::string circuit_line =
    "Circuit (emulated): its packet-rate limit dropped 2214901 packets and its bit-rate shaper 0; the receiving "
    "hosts' kernels delivered 19785200 UDP datagrams. Sent - received = 2214876: those are the circuit's drops";
const std::string limit_line =
    "path (the circuit's counters; 8 of 8 instances' own verdicts say so too); the run, summed over its instances: "
    "2214876 of 22000000 sent lost (10.07 %: 2214876 on the path, 0 by the receiving sockets); path loss: the "
    "instances lost 2214876, the circuit dropped 2214901 (its packet-rate limit 2214901, its bit-rate shaper 0; its "
    "counts also include the tests' control packets)";

}  // namespace

TEST_CASE("issue 39: the circuit dropped every loss, the host counted none: the run's one verdict is the path's",
          "[report][circuit]") {
  folder f;
  const auto runs = reports(f, lab_circuit, 0, [](nb::test_result&) {});
  REQUIRE(runs.size() == 1);
  const harness::run_summary& s = runs[0];
  REQUIRE(s.ok);
  CHECK(s.lost == 2'214'876);
  for (const auto& i : s.run.instances) CHECK(i.result->verdict->limit == "path");  // the instances' own, too
  REQUIRE(s.limit);
  CHECK(s.limit->limit == "path");
  CHECK(harness::limit_words(s) == limit_line);

  const std::string md = read(f.dir / "report.md");
  CHECK_THAT(md, Catch::Contains(circuit_line));
  CHECK_THAT(md, Catch::Contains("**Limit**: " + limit_line));
  CHECK_THAT(md, !Catch::Contains("before-socket") && !Catch::Contains("before the socket"));
  CHECK_THAT(harness::console_summary(runs), Catch::Contains("  limit: " + limit_line));
  const json summary = json::parse(read(f.dir / "summary.json"));
  const json& limit = summary.at("runs").at(0).at("limit");
  CHECK(limit.at("limit") == "path");
  CHECK(limit.at("judged_by") == "circuit");
  CHECK(limit.at("instances") == 8);
  CHECK(limit.at("text_of_instance") == "");
}

TEST_CASE("issue 39: instances' host verdicts (an older netload's) give way to the circuit's counters",
          "[report][circuit]") {
  folder f;
  // What netload wrote before the verdict stopped reading squeezes as drops.
  const auto runs = reports(f, lab_circuit, 0, [](nb::test_result& r) {
    r.verdict = nb::limit_verdict{
        "before-socket", fmt::format("dropped before the socket (backlog / NIC): {} lost past the socket; the "
                                     "receiving host counted 0 backlog drops, 0 interface receive drops, 0 UDP "
                                     "errors, and its softirq ran out of budget 4821 times",
                                     r.loss.path)};
  });
  REQUIRE(runs.size() == 1);
  REQUIRE(runs[0].limit);
  CHECK(runs[0].limit->limit == "path");
  CHECK_THAT(harness::limit_words(runs[0]),
             Catch::StartsWith("path (the circuit's counters; 0 of 8 instances' own verdicts say so too)"));
  const std::string md = read(f.dir / "report.md");
  CHECK_THAT(md, Catch::Contains(circuit_line));
  CHECK_THAT(md, !Catch::Contains("**Limit**: before-socket"));
  CHECK_THAT(harness::report_html(runs, {}, f.dir), Catch::Contains("<b>Limit</b>: path (the circuit&#39;s counters"));
}

TEST_CASE("a circuit that dropped less than half of the loss leaves the verdict to the instances, and says so",
          "[report][circuit]") {
  folder f;
  // The sockets dropped 270 000 of each instance's loss, the circuit a small part.
  const json circuit = {{"limit_dropped", 55'000}, {"shaper_dropped", 0}, {"udp_delivered", 19'785'200}};
  const auto runs = reports(f, circuit, 270'000, [](nb::test_result&) {});
  REQUIRE(runs.size() == 1);
  REQUIRE(runs[0].limit);
  CHECK(runs[0].limit->limit == "receiver-socket");
  CHECK_FALSE(runs[0].limit_by_circuit);
  const std::string words = harness::circuit_words(runs[0]);
  CHECK_THAT(words, Catch::EndsWith("Sent - received = 2214876: the circuit dropped less than half of it, the rest "
                                    "was lost elsewhere (the limit says where)."));
  CHECK_THAT(words, !Catch::Contains("those are the circuit's drops"));
}
