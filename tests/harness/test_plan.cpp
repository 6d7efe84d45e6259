// Plan parsing: a good plan becomes the expected typed plan, and every error class names file:line:col.
#include "harness/plan/expand.hpp"
#include "harness/plan/plan.hpp"
#include "harness/run/dry_run.hpp"
#include "tests/harness/plan_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <catch2/catch.hpp>

#include <string>

using harness::parse_plan;
using harness::plan_error;

namespace {

const std::string hosts = R"(
[hosts]
dev = { address = "127.0.0.1" }
a = { address = "127.0.0.2" }
b = { address = "127.0.0.3" }
)";

// The message of the plan_error the text raises ("" when it parses).
std::string error_of(const std::string& text) {
  try {
    parse_plan(text, "plan.toml");
  } catch (const plan_error& e) {
    return e.what();
  }
  return "";
}

std::string fan_in(const std::string& extra, const std::string& ports = "[0, 0]") {
  return "[defaults]\nduration = 2\nports = " + ports + "\n" + hosts +
         "[[tests]]\nname = \"t\"\nmessage_size = 1\ntopology = \"fan-in\"\nserver = \"dev\"\nclients = [\"a\", \"b\"]\n" +
         extra;
}

}  // namespace

TEST_CASE("harness plan: a fan-in plan parses into typed structs and expands", "[harness][plan]") {
  const auto p = parse_plan(fan_in("pps = 1000\nstreams = 2\n"), "plan.toml");
  REQUIRE(p.tests.size() == 1);
  CHECK(p.tests[0].loads.at(0).pps == 1000.0);
  CHECK(p.tests[0].streams == 2);
  CHECK(p.hosts.at("b").address == "127.0.0.3");
  const auto runs = harness::expand(p);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].servers.size() == 1);
  CHECK(runs[0].instances.size() == 2);
  CHECK(runs[0].instances[1].client == "b");
}

TEST_CASE("harness plan: sweep, pairs both directions and fan-out expand to runs", "[harness][plan]") {
  const std::string text = "[defaults]\nports = [0, 0]\n" + hosts + R"(
[[tests]]
name = "sweep"
message_size = [1, 1400]
topology = "fan-out"
client = "dev"
servers = ["a", "b"]
)" + tcp_pair_test("p", "message_size = 1000\n");
  const auto runs = harness::expand(parse_plan(text, "plan.toml"));
  REQUIRE(runs.size() == 4);
  CHECK(runs[0].id == "sweep-m1");
  CHECK(runs[1].message_size == 1400);
  CHECK(runs[0].servers.size() == 2);
  CHECK(runs[2].id == "p-m1000-a-to-b");
  CHECK(runs[3].instances[0].client == "b");
  CHECK(runs[3].instances[0].category == "OCI internal");
}

TEST_CASE("harness plan error: TOML syntax", "[harness][plan]") {
  CHECK(error_of("name = \"x\"\n[hosts\n").rfind("plan.toml:2:", 0) == 0);
}

TEST_CASE("harness plan error: unknown key", "[harness][plan]") {
  const auto e = error_of(fan_in("mesage_size = 3\n"));
  CHECK(e == "plan.toml:15:1: tests[0]: unknown key 'mesage_size' (did you mean 'message_size'?)");
}

TEST_CASE("harness plan error: a misspelt required key is named where it is, with the key meant", "[harness][plan]") {
  std::string text = fan_in("");
  text.replace(text.find("message_size = 1\n"), 17, "mesage_size = 1\n");
  CHECK(error_of(text) == "plan.toml:11:1: tests[0]: unknown key 'mesage_size' (did you mean 'message_size'?)");
  CHECK(error_of("[hosts]\nx = { adress = \"127.0.0.1\" }\n") ==
        "plan.toml:2:7: host 'x': unknown key 'adress' (did you mean 'address'?)");
  // Nothing near: still the missing key, and an unknown key far from every known one gets no guess.
  CHECK(error_of("[hosts]\nx = { launcher = \"local\" }\n") == "plan.toml:2:5: host 'x': missing key 'address'");
  CHECK(error_of(fan_in("colour = 3\n")) == "plan.toml:15:1: tests[0]: unknown key 'colour'");
}

TEST_CASE("harness plan error: unknown key in a host", "[harness][plan]") {
  const auto e = error_of("[hosts]\nx = { address = \"127.0.0.1\", adress = \"1\" }\n[[tests]]\n");
  CHECK(e == "plan.toml:2:30: host 'x': unknown key 'adress' (did you mean 'address'?)");
}

TEST_CASE("harness plan error: wrong type", "[harness][plan]") {
  CHECK(error_of(fan_in("streams = \"two\"\n")) ==
        "plan.toml:15:11: tests[0]: 'streams' must be an integer, not a string");
  CHECK(error_of("[defaults]\nduration = \"5s\"\n" + hosts) ==
        "plan.toml:2:12: defaults: 'duration' must be a number, not a string");
}

TEST_CASE("harness plan error: unknown host", "[harness][plan]") {
  const std::string text = "[defaults]\nports = [0, 0]\n" + hosts +
                           "[[tests]]\nname = \"t\"\nmessage_size = 1\ntopology = \"fan-in\"\nserver = \"dve\"\n"
                           "clients = [\"a\", \"b\"]\n";
  CHECK(error_of(text) == "plan.toml:12:10: tests[0]: unknown host 'dve'");
  CHECK(error_of("[hosts]\na = { address = \"127.0.0.1\" }\n[groups]\ng = [\"a\", \"zz\"]\n") ==
        "plan.toml:4:11: groups: unknown host 'zz'");
}

TEST_CASE("harness plan error: port clash", "[harness][plan]") {
  CHECK(error_of(fan_in("", "[11256, 11256]")) ==
        "plan.toml:3:9: tests[0]: port clash: port 11256 is used twice on host 'dev'");
  CHECK(error_of(fan_in("", "[0]")) == "plan.toml:3:9: tests[0]: 2 instances need 2 ports, the plan gives 1");
  CHECK(
      error_of(fan_in("ports = \"20-10\"\n")) ==
      "plan.toml:15:9: tests[0]: 'ports' '20-10' is not a port list like \"11256-11263\" or \"11256,11300\": bad port "
      "range '20-10'");
  CHECK(
      error_of(fan_in("ports = \"11256-11257x\"\n")) ==
      "plan.toml:15:9: tests[0]: 'ports' '11256-11257x' is not a port list like \"11256-11263\" or \"11256,11300\": bad "
      "port '11257x' in '11256-11257x'");
}

TEST_CASE("harness plan error: impossible sizes", "[harness][plan]") {
  std::string big = fan_in("");
  big.replace(big.find("message_size = 1\n"), 17, "message_size = [1, 70000]\n");
  CHECK(error_of(big) ==
        "plan.toml:11:20: tests[0]: message_size 70000 is impossible for UDP_STREAM (1 to 65507 bytes)");
  std::string zero = fan_in("");
  zero.replace(zero.find("message_size = 1\n"), 17, "message_size = 0\n");
  CHECK(error_of(zero) == "plan.toml:11:16: tests[0]: message_size 0 is impossible for UDP_STREAM (1 to 65507 bytes)");
  CHECK(error_of(fan_in("send_buffer = \"lots\"\n")) ==
        "plan.toml:15:15: tests[0]: 'send_buffer' = 'lots' is not a socket buffer size like 256K (1 byte to 1G)");
  // netload takes at most 1 GiB (core/base/limits.hpp): a plan asking more is refused when read, not at run time.
  CHECK(error_of(fan_in("send_buffer = \"1025M\"\n")) ==
        "plan.toml:15:15: tests[0]: 'send_buffer' = '1025M' is not a socket buffer size like 256K (1 byte to 1G)");
  CHECK(error_of(fan_in("mss = 1200\n")) == "plan.toml:15:7: tests[0]: 'mss' only applies to TCP tests");
}

TEST_CASE("harness plan error: missing key and bad values", "[harness][plan]") {
  CHECK(error_of("[hosts]\nx = { launcher = \"local\" }\n") == "plan.toml:2:5: host 'x': missing key 'address'");
  CHECK(error_of(fan_in("topology = \"mesh\"\n")).find("unknown key") ==
        std::string::npos);  // duplicate key: TOML syntax
  CHECK(error_of(fan_in("pps = 10\nrate = \"1M\"\n")) == "plan.toml:16:8: tests[0]: give 'pps' or 'rate', not both");
  CHECK(error_of(fan_in("rate = \"fast\"\n")) ==
        "plan.toml:15:8: tests[0]: rate 'fast' is not a bit rate like 100M or 9G");
  CHECK(error_of(fan_in("warmup = 5\n")) == "plan.toml:15:10: tests[0]: warmup 5 s leaves nothing of a 2 s test");
  CHECK(error_of("[hosts]\nx = { address = \"127.0.0.1\", launcher = \"telnet\" }\n") ==
        "plan.toml:2:41: host 'x': launcher 'telnet' is not one of local, ssh, netns");
  CHECK(error_of("[hosts]\nx = { address = \"127.0.0.1\", identity = \"k\" }\n") ==
        "plan.toml:2:41: host 'x': 'identity' only applies to launcher 'ssh'");
}

TEST_CASE("harness plan error: a client host without a key for a keyed netserve", "[harness][plan]") {
  const std::string text =
      "[defaults]\nports = [0, 0]\n[hosts]\ndev = { address = \"127.0.0.1\", psk_file = \"/k\" }\n"
      "a = { address = \"127.0.0.2\", psk_file = \"/k\" }\nb = { address = \"127.0.0.3\" }\n"
      "[[tests]]\nname = \"t\"\nmessage_size = 1\ntopology = \"fan-in\"\nserver = \"dev\"\n"
      "clients = [\"a\", \"b\"]\n";
  CHECK(error_of(text) ==
        "plan.toml:7:1: tests[0]: host 'b' has no psk_file, but the netserve on 'dev' requires a key");
  // The other way round is fine: a keyed client host only presents its key to keyed servers.
  CHECK(error_of(fan_in("", "[0, 0]")
                     .replace(fan_in("", "[0, 0]").find("a = { address = \"127.0.0.2\" }"),
                              std::string("a = { address = \"127.0.0.2\" }").size(),
                              "a = { address = \"127.0.0.2\", psk_file = \"/k\" }")) == "");
}

TEST_CASE("harness plan: engine = \"xdp\" on a host makes its netserve count at the interface's driver",
          "[harness][plan]") {
  const std::string xdp_dev =
      "dev = { address = \"127.0.0.1\", engine = \"xdp\", interface = \"eth1\", xdp_pass = true }";
  std::string text = fan_in("");
  text.replace(text.find("dev = { address = \"127.0.0.1\" }"), std::string("dev = { address = \"127.0.0.1\" }").size(),
               xdp_dev);
  const auto p = parse_plan(text, "plan.toml");
  CHECK(p.hosts.at("dev").engine == nb::receive_engine::xdp);
  CHECK(p.hosts.at("a").engine == nb::receive_engine::socket);
  const auto argv = harness::netserve_command("netserve", p.hosts.at("dev"), {5000});
  CHECK(fmt::format("{}", fmt::join(argv, " ")) ==
        "netserve -p 5000 --bind 127.0.0.1 --engine xdp --interface eth1 --xdp-pass");
  CHECK(fmt::format("{}", fmt::join(harness::netserve_command("netserve", p.hosts.at("a"), {5000}), " ")) ==
        "netserve -p 5000 --bind 127.0.0.2");
  CHECK(error_of("[hosts]\nx = { address = \"127.0.0.1\", engine = \"xdp\" }\n") ==
        "plan.toml:2:5: host 'x': missing key 'interface'");
  CHECK(error_of("[hosts]\nx = { address = \"127.0.0.1\", engine = \"dpdk\" }\n") ==
        "plan.toml:2:39: host 'x': engine 'dpdk' is not socket or xdp");
  CHECK(error_of("[hosts]\nx = { address = \"127.0.0.1\", interface = \"eth1\" }\n") ==
        "plan.toml:2:42: host 'x': 'interface' only applies with engine = \"xdp\"");
  CHECK(error_of("[hosts]\nx = { address = \"127.0.0.1\", engine = \"xdp\", interface = \"a/b\" }\n") ==
        "plan.toml:2:58: host 'x': interface 'a/b' is not an interface name");
  CHECK(error_of(
            "[hosts]\nx = { address = \"127.0.0.1\", engine = \"xdp\", interface = \"e\", xdp_mode = \"fast\" }\n") ==
        "plan.toml:2:74: host 'x': xdp_mode 'fast' is not auto, native or generic");
}

TEST_CASE("harness plan: peer = \"iperf3\" on a host: no netserve there, netload with --peer iperf3",
          "[harness][plan]") {
  std::string text = fan_in("rate = \"1M\"\n", "[5201, 5202]");
  const std::string plain = "dev = { address = \"127.0.0.1\" }";
  text.replace(text.find(plain), plain.size(), "dev = { address = \"127.0.0.1\", peer = \"iperf3\" }");
  const auto p = parse_plan(text, "plan.toml");
  CHECK(p.hosts.at("dev").peer == "iperf3");
  CHECK(p.hosts.at("a").peer == "netserve");
  const auto runs = harness::expand(p);
  REQUIRE(runs.size() == 1);
  const auto argv =
      harness::netload_command("netload", runs[0], p.hosts.at("dev"), 5202, p.hosts.at("b"), false, false);
  CHECK(
      fmt::format("{}", fmt::join(argv, " ")).find("netload -H 127.0.0.1 -p 5202 -t UDP_STREAM -l 2 --peer iperf3 ") ==
      0);
  const std::string dry = harness::dry_run(p, "/bin");
  CHECK(dry.find("netserve -p") == std::string::npos);
  CHECK(
      dry.find("no netserve started (peer = \"iperf3\"): a stock iperf3 -s must be running here on ports 5201, 5202") !=
      std::string::npos);
  CHECK(dry.find("--peer iperf3") != std::string::npos);
  // A netserve host's netload line has no --peer.
  const auto own = harness::netload_command("netload", runs[0], p.hosts.at("a"), 5202, p.hosts.at("b"), false, false);
  CHECK(fmt::format("{}", fmt::join(own, " ")).find("--peer") == std::string::npos);
  CHECK(error_of("[hosts]\nx = { address = \"127.0.0.1\", peer = \"iperf2\" }\n") ==
        "plan.toml:2:37: host 'x': peer 'iperf2' is not netserve, iperf3 or netserver");
  CHECK(error_of("[hosts]\nx = { address = \"127.0.0.1\", peer = 3 }\n").find("plan.toml:2:37: host 'x': 'peer'") == 0);
  CHECK(
      error_of("[hosts]\nx = { address = \"127.0.0.1\", engine = \"xdp\", interface = \"e\", peer = \"iperf3\" }\n") ==
      "plan.toml:2:70: host 'x': peer 'iperf3' runs no netserve: 'engine' does not apply");
}

TEST_CASE("harness plan: a rate list is a sweep of runs, each with its own netload rate", "[harness][plan]") {
  const auto p = parse_plan(fan_in("rate = [\"10m\", \"100m\", \"1000m\"]\naffinity = \"1,0\"\n"), "plan.toml");
  const auto runs = harness::expand(p);
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].id == "t-m1-r10m");
  CHECK(runs[2].load.rate == std::string("1000m"));
  const auto argv = harness::netload_command("netload", runs[1], p.hosts.at("dev"), 5000, p.hosts.at("a"),
                                             runs[1].instances[0].reverse);
  const std::string line = fmt::format("{}", fmt::join(argv, " "));
  CHECK_THAT(line, Catch::Contains("--rate 100m"));
  CHECK_THAT(line, Catch::Contains("-T 1,0"));
  CHECK_THAT(error_of(fan_in("pps = []\n")), Catch::Matches("plan.toml:[0-9]+:[0-9]+: tests\\[0\\]: 'pps' is empty"));
  CHECK_THAT(error_of(fan_in("rate = [\"10m\", \"fast\"]\n")), Catch::Contains("rate 'fast' is not a bit rate"));
  CHECK_THAT(error_of(fan_in("affinity = \"x\"\n")), Catch::Contains("affinity 'x' is not netperf's -T l,r"));
}

TEST_CASE("harness plan: TCP's congestion control, receive size and zero-copy reach netload's command",
          "[harness][plan]") {
  const auto p = parse_plan(
      fan_in("kind = \"TCP_STREAM\"\ncongestion = \"cubic\"\nrecv_size = \"256K\"\nzerocopy = true\n"), "plan.toml");
  const auto runs = harness::expand(p);
  REQUIRE(runs.size() == 1);
  const auto argv = harness::netload_command("netload", runs[0], p.hosts.at("dev"), 5000, p.hosts.at("a"),
                                             runs[0].instances[0].reverse);
  CHECK_THAT(fmt::format("{}", fmt::join(argv, " ")), Catch::EndsWith("-- -m 1 -K cubic --recv-size 256K --zerocopy"));
  CHECK(error_of(fan_in("congestion = \"cubic\"\n")) ==
        "plan.toml:15:14: tests[0]: 'congestion' only applies to TCP tests");
  CHECK(
      error_of(fan_in("kind = \"TCP_STREAM\"\ncongestion = \"cu bic\"\n")) ==
      "plan.toml:16:14: tests[0]: congestion 'cu bic' is not an algorithm's name (1 to 15 letters, digits, '_' or '-')");
  CHECK(error_of(fan_in("kind = \"TCP_STREAM\"\nrecv_size = \"0\"\n")) ==
        "plan.toml:16:13: tests[0]: recv_size '0' is not a size like 64K (1 byte to 16M)");
  CHECK(error_of(fan_in("kind = \"TCP_STREAM\"\nzerocopy = 1\n")) != "");
  CHECK_THAT(error_of(fan_in("kind = \"TCP_STREAM\"\nzerocopy = true\nsend_copy = true\n")),
             Catch::Contains("not both"));
  CHECK_THAT(error_of(fan_in("kind = \"UDP_STREAM\"\nsend_copy = true\n")),
             Catch::Contains("'send_copy' only applies to TCP_STREAM"));
  CHECK_THAT(error_of(fan_in("kind = \"UDP_STREAM\"\nrecv_copy = true\n")),
             Catch::Contains("'recv_copy' only applies to TCP_STREAM"));
}

TEST_CASE("harness plan: recv_mode reaches netload's command, and recv_copy, the older key, still works",
          "[harness][plan]") {
  auto tail = [](const std::string& keys) {
    const auto p = parse_plan(fan_in("kind = \"TCP_STREAM\"\n" + keys), "plan.toml");
    const auto runs = harness::expand(p);
    REQUIRE(runs.size() == 1);
    const auto argv = harness::netload_command("netload", runs[0], p.hosts.at("dev"), 5000, p.hosts.at("a"), false);
    return fmt::format("{}", fmt::join(argv, " "));
  };
  CHECK_THAT(tail(""), Catch::EndsWith("-- -m 1"));  // auto: netload's own choice
  CHECK_THAT(tail("recv_mode = \"auto\"\n"), Catch::EndsWith("-- -m 1"));
  CHECK_THAT(tail("recv_mode = \"copy\"\n"), Catch::EndsWith("-- -m 1 --recv-mode copy"));
  CHECK_THAT(tail("recv_mode = \"discard\"\n"), Catch::EndsWith("-- -m 1 --recv-mode discard"));
  CHECK_THAT(tail("recv_copy = true\n"), Catch::EndsWith("-- -m 1 --recv-mode copy"));
  CHECK_THAT(tail("recv_copy = false\n"),
             Catch::EndsWith("-- -m 1 --recv-mode discard"));  // its meaning when it was written
  CHECK_THAT(tail("recv_copy = true\nrecv_mode = \"copy\"\n"), Catch::EndsWith("-- -m 1 --recv-mode copy"));
  CHECK_THAT(error_of(fan_in("kind = \"TCP_STREAM\"\nrecv_copy = true\nrecv_mode = \"discard\"\n")),
             Catch::Contains("recv_copy = true and recv_mode = 'discard' disagree: give recv_mode only"));
  CHECK_THAT(error_of(fan_in("kind = \"TCP_STREAM\"\nrecv_mode = \"zero\"\n")),
             Catch::Contains("recv_mode 'zero' is not auto, copy or discard"));
  CHECK_THAT(error_of(fan_in("kind = \"UDP_STREAM\"\nrecv_mode = \"copy\"\n")),
             Catch::Contains("'recv_mode' only applies to TCP_STREAM"));
}

TEST_CASE("harness plan: a search trial is the run at a rate split over its instances, under its own id",
          "[harness][plan]") {
  const auto p = parse_plan(fan_in("search = {}\n"), "plan.toml");
  const auto runs = harness::expand(p);
  REQUIRE(runs.size() == 1);
  const auto t = harness::trial_of(runs[0], "t-m1-s02-search", 300000, 0.5, {{"phase", "search"}});
  CHECK(t.load.pps == 150000.0);
  CHECK(t.duration == 0.5);
  CHECK(t.interval == 0.5);
  CHECK(harness::trial_of(runs[0], "x", 0, 2, {}).load.pps == std::nullopt);
  // With a latency probe: a search trial leaves it out, a latency step keeps it beside the load, and the
  // load is split over the two load instances either way.
  const auto probed = harness::expand(parse_plan(fan_in("search = {}\nlatency_probe = true\n"), "plan.toml"));
  REQUIRE(probed.at(0).probe());
  const auto plain = harness::trial_of(probed[0], "y", 300000, 1, {});
  CHECK(plain.instances.size() == 2);
  CHECK_FALSE(plain.probe());
  CHECK(plain.load.pps == 150000.0);
  const auto step = harness::trial_of(probed[0], "z", 300000, 1, {}, true);
  CHECK(step.instances.size() == 3);
  CHECK(step.probe());
  CHECK(step.load.pps == 150000.0);
}

TEST_CASE("harness plan: request/response tests and a latency probe beside a load", "[harness][plan]") {
  harness::plan p = parse_plan("[defaults]\nduration = 2\nports = [0, 0]\n" + hosts +
                                   "[[tests]]\nname = \"rr\"\nkind = \"TCP_RR\"\nresponse_size = 2000\nburst = 3\n"
                                   "topology = \"fan-in\"\nserver = \"dev\"\nclients = [\"a\", \"b\"]\n"
                                   "[[tests]]\nname = \"load\"\nmessage_size = 1400\npps = 1000\nlatency_probe = true\n"
                                   "topology = \"fan-in\"\nserver = \"dev\"\nclients = [\"a\", \"b\"]\n",
                               "plan.toml");
  const harness::test_spec& rr = p.tests.at(0);
  CHECK(rr.message_sizes == std::vector<std::uint32_t>{1});  // netperf's 1-byte request
  CHECK(rr.response_size == 2000);
  CHECK(rr.burst == 3);
  CHECK_FALSE(rr.probe);
  REQUIRE(p.tests.at(1).probe);
  CHECK(p.tests.at(1).probe->pps == 100);
  const auto runs = harness::expand(p);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].probe() == nullptr);
  REQUIRE(runs[1].probe());
  CHECK(runs[1].instances.size() == 3);  // two load instances, then the probe on the first one's path
  CHECK(runs[1].probe()->client == "a");
  CHECK(runs[1].probe_lead() == 2);
  const auto rr_argv = harness::netload_command("netload", runs[0], p.hosts.at("dev"), 1, p.hosts.at("a"), false);
  CHECK(fmt::format("{}", fmt::join(rr_argv, " ")).find("-t TCP_RR") != std::string::npos);
  CHECK(fmt::format("{}", fmt::join(rr_argv, " ")).find("-- -r 1,2000 -b 3") != std::string::npos);
  const auto probe_argv =
      harness::netload_command("netload", runs[1], p.hosts.at("dev"), 1, p.hosts.at("a"), false, true);
  CHECK(fmt::format("{}", fmt::join(probe_argv, " ")).find("-t UDP_RR -l 4 --pps 100 --burst 99") != std::string::npos);
}

TEST_CASE("harness plan error: request/response and probe keys where they do not apply", "[harness][plan]") {
  CHECK_THAT(error_of(fan_in("response_size = 10\n")),
             Catch::Contains("'response_size' only applies to UDP_RR and TCP_RR"));
  CHECK_THAT(error_of(fan_in("kind = \"UDP_RR\"\nrate = \"1M\"\n")), Catch::Contains("give 'pps'"));
  CHECK_THAT(error_of(fan_in("kind = \"UDP_RR\"\nlatency_probe = true\n")), Catch::Contains("itself request/response"));
  CHECK_THAT(error_of(fan_in("latency_probe = { pps = 0 }\n")), Catch::Contains("plan.toml:"));
  CHECK_THAT(error_of(fan_in("kind = \"UDP_RR\"\nburst = 5000\n")), Catch::Contains("burst"));
  CHECK_THAT(error_of(fan_in("kind = \"UDP_RR\"\nburst = 1\n")), Catch::Contains("8 bytes or more"));
  CHECK_THAT(error_of(fan_in("latency_probe = { idle = 1.5 }\n")),
             Catch::Contains("whole number of the plan's 1-s intervals"));
  CHECK_THAT(error_of(fan_in("latency_probe = { size = 4 }\n")), Catch::Contains("size"));
}

TEST_CASE("harness plan: bidirectional runs each instance both ways in one run, at one T0", "[harness][plan][bidir]") {
  const auto p = parse_plan(fan_in("pps = 1000\nbidirectional = true\n"), "plan.toml");
  CHECK(p.tests.at(0).bidirectional);
  const auto runs = harness::expand(p);
  REQUIRE(runs.size() == 1);  // one run: the start barrier starts all four together
  const auto& r = runs[0];
  CHECK(r.bidirectional);
  REQUIRE(r.instances.size() == 4);
  CHECK(r.instances[0].name == "01-a");
  CHECK(!r.instances[0].reverse);
  CHECK(r.instances[2].name == "01-a-reverse");
  CHECK(r.instances[2].reverse);
  CHECK(r.instances[3].client == "b");
  CHECK(r.instances[3].port_slot == r.instances[1].port_slot);  // the same netserve port as its forward partner
  auto line = [&](std::size_t k) {
    const auto& i = r.instances[k];
    return fmt::format("{}", fmt::join(harness::netload_command("netload", r, p.hosts.at(i.server), 5000,
                                                                p.hosts.at(i.client), i.reverse),
                                       " "));
  };
  CHECK_THAT(line(0), !Catch::Contains("--reverse"));
  CHECK_THAT(line(2), Catch::Contains("--reverse"));
  CHECK(harness::to_json(r, p).at("bidirectional") == true);
  CHECK(harness::to_json(r, p).at("instances").at(2).at("reverse") == true);
  // The dry run's equivalents: iperf3 --bidir and iperf -d stand for both instances of a client.
  const std::string dry = harness::dry_run(p, "/opt/bin");
  CHECK_THAT(dry, Catch::Contains("iperf3 -u -l 16 -b 8K -t 2 -c 127.0.0.1 -i 1 -p 0 --bidir"));
  CHECK_THAT(dry, Catch::Contains("both ways at once: the reverse half of the iperf3 --bidir / iperf -d line above"));

  // pairs: "a-to-b" is joined by "b-to-a", run by a's netload in reverse.
  const std::string pairs = "[defaults]\nports = [0]\n" + hosts +
                            "[[tests]]\nname = \"p\"\nmessage_size = 100\ntopology = \"pairs\"\nbidirectional = true\n"
                            "pairs = [{ from = \"a\", to = \"b\" }]\n";
  const auto pr = harness::expand(parse_plan(pairs, "plan.toml"));
  REQUIRE(pr.size() == 1);
  REQUIRE(pr[0].instances.size() == 2);
  CHECK(pr[0].id == "p-m100-a-to-b");
  CHECK(pr[0].instances[1].name == "b-to-a");
  CHECK(pr[0].instances[1].client == "a");
  CHECK(pr[0].instances[1].reverse);
}

TEST_CASE("harness plan error: bidirectional with both_directions, reverse or a search", "[harness][plan][bidir]") {
  CHECK(
      error_of(fan_in("reverse = true\nbidirectional = true\n")) ==
      "plan.toml:16:17: tests[0]: 'bidirectional' runs both directions at once; 'reverse' is one of them: leave it out");
  CHECK(
      error_of(fan_in("search = { trial = 1 }\nbidirectional = true\n")) ==
      "plan.toml:16:17: tests[0]: 'bidirectional' runs both directions at once; a rate 'search' finds one direction's "
      "rate: leave 'bidirectional' out");
  CHECK(error_of(fan_in("bidirectional = \"yes\"\n")) != "");
  CHECK(error_of(fan_in("bidirectional = false\n")) == "");
  const std::string both = "[defaults]\nports = [0]\n" + hosts +
                           "[[tests]]\nname = \"p\"\nmessage_size = 100\ntopology = \"pairs\"\nboth_directions = true\n"
                           "bidirectional = true\npairs = [{ from = \"a\", to = \"b\" }]\n";
  CHECK(error_of(both) ==
        "plan.toml:13:17: tests[0]: 'bidirectional' runs both directions at once; 'both_directions' runs "
        "them one after the other: give one of the two");
}

TEST_CASE("harness plan: a reverse test's instances run netload --reverse, and none of them is a probe",
          "[harness][plan]") {
  const auto p = parse_plan(fan_in("pps = 1000\nreverse = true\n"), "plan.toml");
  const auto runs = harness::expand(p);
  REQUIRE(runs.size() == 1);
  REQUIRE(runs[0].instances.size() == 2);
  CHECK(runs[0].probe() == nullptr);
  for (const auto& i : runs[0].instances) {
    CHECK(i.reverse);
    CHECK_FALSE(i.probe);
    CHECK_THAT(fmt::format("{}", fmt::join(harness::netload_command("netload", runs[0], p.hosts.at(i.server), 5000,
                                                                    p.hosts.at(i.client), i.reverse, i.probe),
                                           " ")),
               Catch::Contains("--reverse"));
  }
  CHECK(harness::to_json(runs[0], p).at("instances").size() == 2);
}

// The text with its first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

TEST_CASE("harness dry run: the replaced iperf and netperf lines say the same test - units, streams, ceiling, MSS",
          "[harness][plan][dry]") {
  // The OCI tutorial's iperf -c SERVER -b 9G -P 5 -M 1200: iperf2 reads 9G as 9 x 2^30 bit/s per stream.
  const auto p = parse_plan(replaced(fan_in("kind = \"TCP_STREAM\"\nmessage_size = 131072\nrate = \"48318382080\"\n"
                                            "streams = 5\nmss = 1200\nrecv_size = \"64K\"\n"),
                                     "message_size = 1\n", ""),
                            "plan.toml");
  const std::string dry = harness::dry_run(p, "/opt/bin");
  CHECK_THAT(dry, Catch::Contains("--mss 1200") && !Catch::Contains("-- -m 131072 -M 1200"));
  CHECK_THAT(dry, Catch::Contains("replaces: iperf -c 127.0.0.1 -p 0 -t 2 -b 9G -P 5 -M 1200"));
  CHECK_THAT(
      dry, Catch::Contains("replaces: netperf -H 127.0.0.1 -p 0 -t TCP_STREAM -l 2 -- -m 131072 -M 64K   (--streams 5: "
                           "5 such netperf processes at once, one stream each; --rate 48318382080: netperf cannot "
                           "pace it (for TCP a ceiling, as iperf's -b); --mss 1200: netperf cannot set the MSS)"));
  // A decimal rate stays decimal in iperf2's lower case; iperf3's suffixes are decimal in either case.
  const auto dec = parse_plan(fan_in("kind = \"TCP_STREAM\"\nrate = \"45G\"\nstreams = 5\n"), "plan.toml");
  CHECK_THAT(harness::dry_run(dec, "/opt/bin"), Catch::Contains("-b 9g -P 5"));
  const auto udp = parse_plan(fan_in("rate = \"200M\"\nstreams = 2\n"), "plan.toml");
  CHECK_THAT(harness::dry_run(udp, "/opt/bin"),
             Catch::Contains("iperf3 -u -l 16 -b 100M -t 2 -c 127.0.0.1 -i 1 -p 0 -P 2"));
}

TEST_CASE("harness dry run: a search's commands are its trials', with their lengths", "[harness][plan][dry]") {
  const auto p =
      parse_plan(replaced(fan_in("search = { trial = 1, final = 4 }\n"), "duration = 2", "duration = 5"), "plan.toml");
  const std::string dry = harness::dry_run(p, "/opt/bin");
  CHECK_THAT(dry, Catch::Contains(" -l 1 ") && !Catch::Contains(" -l 5 "));
  CHECK_THAT(dry, Catch::Contains("this unpaced trial (MRR, -l 1)"));
  CHECK_THAT(dry, Catch::Contains("with --pps LOAD/2 (aggregate = per instance × 2 instances)"));
  CHECK_THAT(dry, Catch::Contains("NDR (loss_ratio 0, exceed_ratio 0, trials 1 to 4 s, duration_sum 4 s, width 0.01)"));
}

TEST_CASE("the receive engine's words read back as the engine they name, and nothing else reads", "[harness][plan]") {
  for (auto e : {nb::receive_engine::socket, nb::receive_engine::xdp})
    CHECK(nb::parse_receive_engine(nb::to_string(e)) == e);
  CHECK(nb::to_string(nb::receive_engine::xdp) == "xdp");
  CHECK_FALSE(nb::parse_receive_engine("XDP"));
  CHECK_FALSE(nb::parse_receive_engine(""));
  CHECK_FALSE(nb::parse_receive_engine("xdp-native"));
}
