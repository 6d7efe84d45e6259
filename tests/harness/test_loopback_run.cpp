// The real thing on loopback: the harness binary runs eight netload instances against one netserve
// (127.0.0.1 <- 127.0.0.2..9, free ports), and the results folder must add up: the aggregate equals the
// sum of the raw files, start skew is reported and small, `harness report` rebuilds the same summary.
#include "harness/process/process.hpp"
#include "tests/harness/plan_text.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include "tests/support/temp_file.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

fs::path temp_dir(const char* tag) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("harness-{}-{}", tag, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string eight_instance_plan() {
  std::string hosts = "device = { address = \"127.0.0.1\" }\n", group;
  for (int i = 1; i <= 8; ++i) {
    hosts += fmt::format("c{} = {{ address = \"127.0.0.{}\" }}\n", i, i + 1);
    group += fmt::format("{}\"c{}\"", i > 1 ? ", " : "", i);
  }
  return fmt::format(R"(name = "eight"
[defaults]
duration = 2
warmup = 1
lead = 1.0
ports = [0, 0, 0, 0, 0, 0, 0, 0]
[hosts]
{}
[groups]
clients = [{}]
[[tests]]
name = "pps"
message_size = 16
pps = 5000
topology = "fan-in"
server = "device"
clients = "clients"
)",
                     hosts, group);
}

// Runs `plan` (written to root/FILE) with the harness, which must pass; its results folder.
fs::path run_plan(const fs::path& root, const std::string& file, const std::string& plan) {
  std::ofstream(root / file) << plan;
  const auto o = nb::run_blocking({HARNESS_PATH, "run", (root / file).string(), "--results",
                                   (root / "results").string(), "--bin-dir", NETBENCH_BIN_DIR, "--no-live"},
                                  60s);
  INFO(o.stderr_text << o.stdout_text);
  REQUIRE(o.exit_code == 0);
  fs::path dir;
  for (const auto& e : fs::directory_iterator(root / "results"))
    if (e.is_directory()) dir = e.path();  // beside it: the results database
  return dir;
}

}  // namespace

TEST_CASE("harness integration: eight instances on loopback add up, start together, report rebuilds",
          "[harness][loopback]") {
  const fs::path root = temp_dir("eight");
  std::ofstream(root / "eight.toml") << eight_instance_plan();
  const auto o = nb::run_blocking({HARNESS_PATH, "run", (root / "eight.toml").string(), "--results",
                                   (root / "results").string(), "--bin-dir", NETBENCH_BIN_DIR},
                                  90s);
  INFO(o.stderr_text);
  REQUIRE(o.exit_code == 0);
  CHECK(o.stdout_text.find("SUM") != std::string::npos);
  CHECK(o.stdout_text.find("STEADY") != std::string::npos);

  fs::path dir;
  for (const auto& e : fs::directory_iterator(root / "results"))
    if (e.is_directory()) dir = e.path();  // beside it: the results database
  REQUIRE(fs::exists(dir / "raw" / "pps-m16" / "run.json"));
  for (const char* f : {"plan.toml", "environment.json", "summary.json", "summary.csv", "report.md"})
    CHECK(fs::exists(dir / f));

  // The sums, from the raw files alone.
  std::uint64_t sent = 0, received = 0;
  double sent_pps = 0, received_bps = 0, earliest = 1e300, latest = 0;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir / "raw" / "pps-m16")) {
    if (e.path().filename() == "run.json") continue;
    const json r = json::parse(nb::test::read_text(e.path())).at("result");
    ++files;
    sent += r.at("sender").at("packets").get<std::uint64_t>();
    received += r.at("receiver").at("packets").get<std::uint64_t>();
    sent_pps += r.at("sender").at("pps").get<double>();
    received_bps += r.at("receiver").at("bits_per_second").get<double>();
    earliest = std::min(earliest, r.at("actual_start").get<double>());
    latest = std::max(latest, r.at("actual_start").get<double>());
  }
  CHECK(files == 8);
  CHECK(sent > 8 * 5000);  // 2 s at 5000 pps each, give or take pacing

  const json summary = json::parse(nb::test::read_text(dir / "summary.json"));
  const json& run0 = summary.at("runs").at(0);
  REQUIRE(run0.at("ok").get<bool>());
  CHECK(run0.at("instances").size() == 8);
  CHECK(run0.at("sum").at("sender").at("packets").get<std::uint64_t>() == sent);
  CHECK(run0.at("sum").at("receiver").at("packets").get<std::uint64_t>() == received);
  CHECK(run0.at("sum").at("sender").at("pps").get<double>() == Approx(sent_pps));
  CHECK(run0.at("sum").at("receiver").at("bits_per_second").get<double>() == Approx(received_bps));
  const double skew = run0.at("start_skew_ms").get<double>();
  CHECK(skew == Approx((latest - earliest) * 1e3).margin(1e-6));
  CHECK(skew < 20.0);
  CHECK(run0.at("steady_state").at("slots").get<int>() >= 1);

  // `harness report DIR` rebuilds every report from raw/ alone, to the same content.
  const std::string before = nb::test::read_text(dir / "summary.json"), md = nb::test::read_text(dir / "report.md");
  fs::remove(dir / "summary.json");
  fs::remove(dir / "report.md");
  fs::remove(dir / "summary.csv");
  const auto rep = nb::run_blocking({HARNESS_PATH, "report", dir.string()}, 30s);
  CHECK(rep.exit_code == 0);
  CHECK(nb::test::read_text(dir / "summary.json") == before);
  CHECK(nb::test::read_text(dir / "report.md") == md);
  CHECK(fs::exists(dir / "summary.csv"));
  fs::remove_all(root);
}

TEST_CASE("harness integration: pairs in both directions give the from -> to -> bandwidth -> category table",
          "[harness][loopback][pairs]") {
  const fs::path root = temp_dir("pairs");
  const fs::path dir = run_plan(root, "pairs.toml", R"(name = "pairs"
[defaults]
duration = 1
warmup = 0
lead = 0.5
settle = 0.2
ports = [0]
[hosts]
a = { address = "127.0.0.2" }
b = { address = "127.0.0.3" }
)" + tcp_pair_test("tcp", "message_size = 16384\nrate = \"200M\"\nstreams = 2\n"));
  const std::string md = nb::test::read_text(dir / "report.md");
  CHECK(md.find("## Pairs: from -> to -> bandwidth -> category") != std::string::npos);
  CHECK(md.find("| a | b | ") != std::string::npos);
  CHECK(md.find("| b | a | ") != std::string::npos);
  CHECK(md.find("| OCI internal | tcp-m16384-a-to-b |") != std::string::npos);
  // The MSS asked for reached netload, and TCP byte counts reconcile.
  const json r = json::parse(nb::test::read_text(dir / "raw" / "tcp-m16384-b-to-a" / "b-to-a.json")).at("result");
  CHECK(r.at("options").at("mss").get<int>() == 1200);
  CHECK(r.at("loss").at("reconciles").get<bool>());
  fs::remove_all(root);
}

TEST_CASE("harness integration: psk_file on a host keys its netserve and its netload", "[harness][loopback]") {
  const fs::path root = temp_dir("psk");
  const fs::path key = root / "key";
  std::ofstream(key) << "a key for this test only\n";
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  auto plan = [&](bool client_has_key) {
    return fmt::format(R"(name = "keyed"
[defaults]
duration = 1
warmup = 0
lead = 1.0
ports = [0]
[hosts]
device = {{ address = "127.0.0.1", psk_file = "{0}" }}
c1 = {{ address = "127.0.0.2"{1} }}
[[tests]]
name = "pps"
message_size = 100
pps = 2000
topology = "fan-in"
server = "device"
clients = ["c1"]
)",
                       key.string(), client_has_key ? fmt::format(", psk_file = \"{}\"", key.string()) : "");
  };
  auto run = [&](const char* name, bool client_has_key) {
    std::ofstream(root / name) << plan(client_has_key);
    return nb::run_blocking({HARNESS_PATH, "run", (root / name).string(), "--results", (root / "results").string(),
                             "--bin-dir", NETBENCH_BIN_DIR, "--no-live"},
                            60s);
  };

  const auto ok = run("keyed.toml", true);
  INFO(ok.stderr_text << ok.stdout_text);
  CHECK(ok.exit_code == 0);
  const auto refused = run("half.toml", false);
  INFO(refused.stderr_text << refused.stdout_text);
  CHECK(refused.exit_code != 0);  // refused when the plan is read, before anything runs
  CHECK((refused.stderr_text + refused.stdout_text)
            .find("host 'c1' has no psk_file, but the netserve on 'device' requires a key") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("harness integration: a latency probe beside the load, and UDP_RR instances' round trips merged exactly",
          "[harness][loopback][latency]") {
  const fs::path root = temp_dir("latency");
  const fs::path dir = run_plan(root, "latency.toml", R"(name = "latency"
[defaults]
duration = 2
warmup = 1
lead = 0.5
settle = 0.2
ports = [0, 0]
skew_bound_ms = 50
[hosts]
dev = { address = "127.0.0.1" }
a = { address = "127.0.0.2" }
b = { address = "127.0.0.3" }
[[tests]]
name = "load"
message_size = 1000
pps = 2000
topology = "fan-in"
server = "dev"
clients = ["a", "b"]
latency_probe = { pps = 50, idle = 1 }
[[tests]]
name = "rr"
kind = "UDP_RR"
message_size = 32
response_size = 200
burst = 2
pps = 500
topology = "fan-in"
server = "dev"
clients = ["a", "b"]
)");
  const json summary = json::parse(nb::test::read_text(dir / "summary.json"));
  const json* load = nullptr;
  const json* rr = nullptr;
  for (const json& run : summary.at("runs")) (run.at("kind") == "UDP_RR" ? rr : load) = &run;
  REQUIRE(load);
  REQUIRE(rr);
  // The probe: 50 per second, 1 s idle before T0 and the load's 2 s, the steady part after the 1-s warm-up.
  const json& probe = load->at("probe");
  CHECK(probe.at("error") == "");
  CHECK(probe.at("idle").at("count").get<int>() >= 45);
  CHECK(probe.at("loaded").at("count").get<int>() >= 45);
  CHECK(probe.at("series").size() == 3);
  // Not part of the load: two instances, their sums without the probe's transactions.
  CHECK(load->at("instances").size() == 2);
  CHECK(load->at("sum").at("sender").at("packets").get<std::uint64_t>() ==
        load->at("instances")[0].at("sender").at("packets").get<std::uint64_t>() +
            load->at("instances")[1].at("sender").at("packets").get<std::uint64_t>());
  // The RR run: the merged histogram holds every instance's transactions, as their raw results say.
  std::uint64_t transactions = 0;
  for (const char* name : {"01-a", "02-b"}) {
    const json r =
        json::parse(nb::test::read_text(dir / "raw" / "rr-m32" / (std::string(name) + ".json"))).at("result");
    transactions += r.at("rr").at("transactions").get<std::uint64_t>();
  }
  CHECK(transactions > 0);
  CHECK(rr->at("rr").at("transactions").get<std::uint64_t>() == transactions);
  CHECK(rr->at("rr").at("latency").at("count").get<std::uint64_t>() == transactions);
  const std::string md = nb::test::read_text(dir / "report.md");
  CHECK(md.find("Latency probe (UDP_RR, 50 per second") != std::string::npos);
  CHECK(md.find("Round trips, every instance merged") != std::string::npos);
  CHECK(nb::test::read_text(dir / "report.html").find("Latency probe: the round trips of each interval") !=
        std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("harness integration: bidirectional runs both directions at one T0, each reported on its own",
          "[harness][loopback][bidir]") {
  const fs::path root = temp_dir("bidir");
  const fs::path dir = run_plan(root, "bidir.toml", R"(name = "bidir"
[defaults]
duration = 1
warmup = 0
lead = 0.5
settle = 0.2
ports = [0]
[hosts]
device = { address = "127.0.0.1" }
c1 = { address = "127.0.0.2" }
[[tests]]
name = "udp"
message_size = 100
pps = 2000
topology = "fan-in"
server = "device"
clients = ["c1"]
bidirectional = true
)");
  // One run on disk, both directions' instances in it, started at the same instant.
  const fs::path raw = dir / "raw" / "udp-m100";
  const json fwd = json::parse(nb::test::read_text(raw / "01-c1.json")).at("result");
  const json rev = json::parse(nb::test::read_text(raw / "01-c1-reverse.json")).at("result");
  CHECK(fwd.at("reverse") == false);
  CHECK(rev.at("reverse") == true);
  CHECK(fwd.at("requested_start") == rev.at("requested_start"));
  CHECK(fwd.at("intervals").at(0).at("start_ns") == rev.at("intervals").at(0).at("start_ns"));
  for (const json* r : {&fwd, &rev}) {
    CHECK(r->at("loss").at("reconciles").get<bool>());
    CHECK(r->at("sender").at("packets").get<std::uint64_t>() ==
          r->at("receiver").at("packets").get<std::uint64_t>() + r->at("loss").at("packets").get<std::uint64_t>());
    CHECK(r->at("receiver").at("packets").get<std::uint64_t>() > 0);
  }
  // Reported as two runs, one per direction, each with its own sum, each naming the other.
  const json runs = json::parse(nb::test::read_text(dir / "summary.json")).at("runs");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].at("run") == "udp-m100-forward");
  CHECK(runs[1].at("run") == "udp-m100-reverse");
  CHECK(runs[0].at("both_ways").at("together_with") == "udp-m100-reverse");
  CHECK(runs[1].at("both_ways").at("together_with") == "udp-m100-forward");
  for (std::size_t k = 0; k < 2; ++k) {
    CHECK(runs[k].at("ok").get<bool>());
    CHECK(runs[k].at("instances").size() == 1);
  }
  CHECK(runs[0].at("sum").at("sender").at("packets") == fwd.at("sender").at("packets"));
  CHECK(runs[1].at("sum").at("receiver").at("packets") == rev.at("receiver").at("packets"));
  CHECK(runs[0].at("t0") == runs[1].at("t0"));
  const std::string md = nb::test::read_text(dir / "report.md");
  CHECK(md.find("both ways at once: these rows ran at the same instant as run udp-m100-reverse") != std::string::npos);
  fs::remove_all(root);
}
