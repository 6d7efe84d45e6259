#include "netload/cli/cli.hpp"

#include "core/base/cli_help.hpp"

#include <fmt/ranges.h>
#include <catch2/catch.hpp>

#include <algorithm>

using namespace nb::load;
using nb::test_kind;

namespace {
client_options parse(std::vector<std::string> args) {
  auto o = parse_command_line(args);
  REQUIRE(o);
  return *o;
}
}  // namespace

TEST_CASE("the seed procedure's netperf command lines parse unchanged", "[cli]") {
  // Parsed only: nothing is ever sent to the procedure's addresses.
  auto parsed = parse({"-H", "192.168.100.1", "-p", "11256", "-t", "UDP_STREAM", "-l", "300", "--", "-m", "1"});
  CHECK(parsed.host == "192.168.100.1");
  CHECK(parsed.port == 11256);
  CHECK(parsed.kind == nb::test_kind::udp_stream);
  CHECK(parsed.duration_s == 300);
  CHECK(parsed.message_size == 1);
  CHECK(parsed.target_pps() == 0);
}

TEST_CASE("netperf's -T - -s - -S - -M and -R parse", "[cli]") {
  auto o = parse({"-t", "TCP_STREAM", "-T", "0,1", "--", "-s", "128K", "-S", "256K", "-M", "1200", "-R", "1"});
  CHECK(o.local_cpu == 0);
  CHECK(o.remote_cpu == 1);
  CHECK(o.local_buffer == 131072);
  CHECK(o.remote_buffer == 262144);
  // netperf's -M is the remote receive size (bytes per recv()), not the MSS.
  CHECK(o.recv_size == 1200);
  CHECK(o.mss == 0);
  CHECK(parse({"-T", "1"}).remote_cpu == 1);
  CHECK(parse({"-T", ",1"}).local_cpu == -1);
}

TEST_CASE("long options: rate - pps - streams - start - json", "[cli]") {
  auto o = parse({"-t", "UDP_STREAM", "--rate", "100m", "--streams", "4", "--start-at", "1700000000.25",
                  "--json-stream", "--", "-m", "1250"});
  CHECK(o.rate_bps == 100e6);
  CHECK(o.target_pps() == Approx(10000));
  CHECK(o.streams == 4);
  CHECK(o.start_at == 1700000000.25);
  CHECK(o.json_stream);
  CHECK(o.interval_s == 1);  // JSON lines imply intervals
  CHECK(parse({"-t", "UDP_STREAM"}).message_size == 1472);
  CHECK(parse({}).message_size == 1024 * 1024);
}

TEST_CASE("netperf's -c and -C ask for each host's CPU utilisation", "[cli]") {
  auto o = parse({"-t", "UDP_STREAM", "-c", "-C"});
  CHECK(o.local_cpu_util);
  CHECK(o.remote_cpu_util);
  o = parse({"-C"});
  CHECK_FALSE(o.local_cpu_util);
  CHECK(o.remote_cpu_util);
  CHECK_THROWS_WITH(parse_command_line({"--", "-C"}),
                    Catch::Contains("TCP_CORK"));  // after --, netperf's -C is TCP_CORK
}

TEST_CASE("request/response: -r REQ,RESP and the burst, netperf's defaults, and what does not apply", "[cli]") {
  auto o = parse_command_line({"-t", "UDP_RR"});
  REQUIRE(o);
  CHECK(o->kind == test_kind::udp_rr);
  CHECK(o->message_size == 1);  // netperf's -r 1,1
  CHECK(o->response_size == 1);
  CHECK(o->burst == 0);
  o = parse_command_line({"-t", "TCP_RR", "--", "-r", "64,2K", "-b", "3"});
  REQUIRE(o);
  CHECK(o->message_size == 64);
  CHECK(o->response_size == 2048);
  CHECK(o->burst == 3);
  o = parse_command_line({"-t", "UDP_RR", "--burst", "2", "--", "-r", "100"});  // one size: both
  REQUIRE(o);
  CHECK(o->message_size == 100);
  CHECK(o->response_size == 100);
  CHECK(o->burst == 2);
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_RR", "--", "-m", "64"}), Catch::Contains("-r REQ,RESP"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_RR", "--", "-r", "70000,1"}),
                    Catch::Contains("between 1 and 65507"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_RR", "--reverse"}), Catch::Contains("no reverse"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_RR", "--rate", "1M"}), Catch::Contains("--pps gives transactions"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--", "-r", "1,1"}),
                    Catch::Contains("UDP_RR and TCP_RR only"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--burst", "1"}),
                    Catch::Contains("UDP_RR and TCP_RR only"));
  CHECK_THROWS_AS(parse_command_line({"-t", "TCP_RR", "--burst", "5000"}), usage_error);
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_RR", "--burst", "3", "--", "-b", "4", "-r", "64"}),
                    Catch::Contains("not both"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_RR", "--bidir"}), Catch::Contains("--bidir"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_RR", "--burst", "1"}), Catch::Contains("8 bytes or more"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_RR", "--burst", "1", "--", "-r", "64,4"}),
                    Catch::Contains("8 bytes or more"));
  CHECK(parse_command_line({"-t", "TCP_RR", "--burst", "1"}));  // TCP answers come in order: no number needed
}

TEST_CASE("unsupported and contradictory options are usage errors", "[cli]") {
  CHECK_THROWS_WITH(parse_command_line({"-b", "4"}), Catch::Contains("netperf option -b (burst size)"));
  CHECK_THROWS_WITH(parse_command_line({"--", "-P", "12865"}), Catch::Contains("test-specific option -P"));
  CHECK_THROWS_AS(parse_command_line({"--bogus"}), usage_error);
  CHECK_THROWS_WITH(parse_command_line({"-t", "SCTP_STREAM"}), Catch::Contains("UDP_RR, TCP_RR"));
  CHECK_THROWS_WITH(parse_command_line({"--rate", "1M", "--pps", "5"}), Catch::Contains("not both"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--", "-m", "70000"}), Catch::Contains("65507"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--", "--mss", "1200"}), Catch::Contains("TCP tests only"));
  CHECK_THROWS_WITH(
      parse_command_line({"-t", "UDP_STREAM", "--", "-M", "1200"}),
      Catch::Contains("-M (the receiver's bytes per recv()) applies to TCP_STREAM only; the MSS is --mss"));
  CHECK_THROWS_WITH(parse_command_line({"--", "-R", "0"}), Catch::Contains("SO_DONTROUTE"));
  CHECK_THROWS_AS(parse_command_line({"-l", "0"}), usage_error);
  CHECK_THROWS_AS(parse_command_line({"--rate", "lots"}), usage_error);
}

TEST_CASE("TCP options: -K (netperf's congestion control), --recv-size, --zerocopy", "[cli]") {
  auto o = parse({"--", "-K", "cubic", "--recv-size", "256K", "--zerocopy"});
  CHECK(o.congestion == "cubic");
  CHECK(o.recv_size == 256u << 10);
  CHECK(o.zerocopy);
  o = parse({});
  CHECK(o.congestion.empty());
  CHECK(o.recv_size == 0);  // the receiver's default
  CHECK_FALSE(o.zerocopy);
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--", "-K", "cubic"}), Catch::Contains("TCP tests only"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--", "--zerocopy"}), Catch::Contains("TCP_STREAM only"));
  CHECK(parse({"--", "--send-copy"}).send_copy);
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--", "--recv-copy"}), Catch::Contains("TCP_STREAM only"));
  CHECK_FALSE(o.send_copy);  // sendfile() unless asked
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--", "--send-copy"}), Catch::Contains("TCP_STREAM only"));
  CHECK_THROWS_WITH(parse_command_line({"--", "--send-copy", "--zerocopy"}), Catch::Contains("not both"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--", "--recv-size", "1K"}),
                    Catch::Contains("TCP_STREAM only"));
  // The kernel would cut a long name to 15 characters and maybe pick another algorithm: refused here.
  CHECK_THROWS_WITH(parse_command_line({"--", "-K", "cubiccubiccubic16"}), Catch::Contains("1 to 15"));
  CHECK_THROWS_WITH(parse_command_line({"--", "-K", "cu bic"}), Catch::Contains("1 to 15"));
  CHECK_THROWS_WITH(parse_command_line({"--", "--recv-size", "0"}), Catch::Contains("--recv-size must be"));
  CHECK_THROWS_WITH(parse_command_line({"--", "--recv-size", "17M"}), Catch::Contains("--recv-size must be"));
}

TEST_CASE("netload -T takes whole CPU numbers only", "[cli]") {
  for (const char* junk : {"24x", "+0", " 0", "0,1x", "0,+1", "-1"})
    CHECK_THROWS_WITH(parse_command_line({"-T", junk}), Catch::Contains("bad CPU list"));
}

TEST_CASE("the MSS is --mss - -M and --recv-size are one setting", "[cli]") {
  auto o = parse({"-t", "TCP_STREAM", "--", "--mss", "1200", "-M", "64K"});
  CHECK(o.mss == 1200);
  CHECK(o.recv_size == 65536);
  CHECK(parse({"--", "-M", "64K", "--recv-size", "64K"}).recv_size == 65536);
  CHECK_THROWS_WITH(parse_command_line({"--", "-M", "64K", "--recv-size", "32K"}), Catch::Contains("one setting"));
  CHECK_THROWS_WITH(parse_command_line({"--", "--mss", "20"}), Catch::Contains("--mss must be a whole number from 88"));
}

TEST_CASE("an option given twice takes its last value, as netperf's getopt does", "[cli]") {
  CHECK(parse({"-l", "1", "-l", "2"}).duration_s == 2);
  CHECK(parse({"-t", "UDP_STREAM", "-t", "TCP_STREAM"}).kind == test_kind::tcp_stream);
  CHECK(parse({"--", "-m", "1K", "-m", "2K"}).message_size == 2048);
  CHECK(parse({"--host-info", "--mtu-to", "a", "--mtu-to", "b"}).mtu_peers == std::vector<std::string>{"a", "b"});
}

TEST_CASE("netload -f: the units of the printed rates, netperf's letters", "[cli]") {
  CHECK(parse({}).rate_units == 0);
  for (char c : std::string("kmgKMG")) CHECK(parse({"-f", std::string(1, c)}).rate_units == c);
  CHECK_THROWS_WITH(parse_command_line({"-f", "x"}), Catch::Contains("-f x: the units are k, m or g"));
  CHECK_THROWS_WITH(parse_command_line({"-f", "mm"}), Catch::Contains("-f mm"));
}

TEST_CASE("netload --omit: the test runs that much longer, the left-out part ends at an interval's end", "[cli]") {
  auto o = parse({"-l", "5", "--omit", "2"});
  CHECK(o.duration_s == 7);
  CHECK(o.interval_s == 2);  // no --interval: the left-out part is the first interval
  CHECK(parse({"-l", "5", "--omit", "2", "--interval", "1"}).interval_s == 1);
  CHECK_THROWS_WITH(parse_command_line({"-l", "5", "--omit", "1.5", "--interval", "1"}),
                    Catch::Contains("not a whole number of --interval"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_RR", "--omit", "1"}),
                    Catch::Contains("--omit applies to UDP_STREAM"));
}

TEST_CASE("the peer option: netserve by default, iperf3 or netserver, nothing else", "[cli]") {
  CHECK(parse({"-t", "UDP_STREAM"}).peer == peer_kind::netserve);
  CHECK(parse({"--peer", "netserver", "-t", "UDP_STREAM"}).peer == peer_kind::netserver);
  CHECK(parse({"--peer", "iperf3"}).peer == peer_kind::iperf3);
  CHECK(parse({"--peer", "netserve"}).peer == peer_kind::netserve);
  CHECK_THROWS_AS(parse_command_line({"--peer", "netperf"}), usage_error);
}

TEST_CASE(
    "TCP receive mode: --recv-mode auto|copy|discard, --recv-copy and --recv-discard its short forms, one setting",
    "[cli]") {
  CHECK(parse({}).receive == nb::recv_mode::automatic);  // netload chooses when it knows where the peer is
  CHECK_FALSE(parse({}).recv_copy);                      // ...not before
  CHECK(parse({"--", "--recv-copy"}).receive == nb::recv_mode::copy);
  CHECK(parse({"--", "--recv-discard"}).receive == nb::recv_mode::discard);
  CHECK(parse({"--", "--recv-mode", "copy"}).receive == nb::recv_mode::copy);
  CHECK(parse({"--", "--recv-mode", "discard"}).receive == nb::recv_mode::discard);
  CHECK(parse({"--", "--recv-mode", "auto"}).receive == nb::recv_mode::automatic);
  CHECK(parse({"--", "--recv-mode", "copy", "--recv-copy"}).receive == nb::recv_mode::copy);  // alike: fine
  CHECK_THROWS_WITH(parse_command_line({"--", "--recv-copy", "--recv-discard"}),
                    Catch::Contains("--recv-copy and --recv-discard: one receive mode, not both"));
  CHECK_THROWS_WITH(parse_command_line({"--", "--recv-mode", "auto", "--recv-copy"}), Catch::Contains("not both"));
  CHECK_THROWS_WITH(parse_command_line({"--", "--recv-mode", "zero"}),
                    Catch::Contains("--recv-mode 'zero': the modes are auto, copy and discard"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "UDP_STREAM", "--", "--recv-discard"}),
                    Catch::Contains("--recv-discard applies to TCP_STREAM only"));
  CHECK_THROWS_WITH(parse_command_line({"-t", "TCP_RR", "--", "--recv-mode", "copy"}),
                    Catch::Contains("--recv-mode copy applies to TCP_STREAM only"));
  CHECK_THROWS_WITH(parse_command_line({"--peer", "iperf3", "--", "--recv-discard"}),
                    Catch::Contains("iperf3's receiver"));
}

TEST_CASE("an unknown option is named, with the nearest known one, whatever follows it", "[cli]") {
  auto refused = [](std::vector<std::string> args, const std::string& text) {
    INFO(fmt::format("{}", fmt::join(args, " ")));
    CHECK_THROWS_WITH(parse_command_line(args), text);
  };
  const std::string psp = "unknown option '--psp' (did you mean '--pps'?)";
  refused({"--psp", "1000"}, psp);  // CLI11 alone names the value: '1000'
  refused({"--psp=1000"}, psp);
  refused({"--psp"}, psp);
  refused({"--psp", "--"}, psp);
  refused({"-t", "UDP_STREAM", "--psp", "1000", "--", "-m", "64"}, psp);
  refused({"--psp", "--rate", "1m"}, psp);
  refused({"--psp", "-5"}, psp);
  refused({"--PPS", "10"}, "unknown option '--PPS' (did you mean '--pps'?)");
  refused({"--bogus", "1"}, "unknown option '--bogus'");  // nothing near: no guess
  refused({"--iperf", "3"}, "unknown option '--iperf' (did you mean '--iperf3'?)");
  refused({"--", "-m", "64", "--zerocpy", "x"}, "unknown option '--zerocpy' (did you mean '--zerocopy'?)");
  // On the wrong side of "--": where it goes.
  refused({"-t", "UDP_STREAM", "-m", "64"}, "'-m' is a test option: give it after -- (netload [OPTIONS] -- -m ...)");
  refused({"-m64"}, "'-m' is a test option: give it after -- (netload [OPTIONS] -- -m ...)");
  refused({"--", "--pps", "1000"}, "'--pps' is not a test option: give it before --");
  // Arguments that are no options are still said as arguments, the first one first.
  refused({"-t", "UDP_STREAM", "stray", "two"}, "unexpected argument 'stray'");
  refused({"-l", "-5"}, "-l must be a positive number of seconds");  // a negative value is the option's
}

TEST_CASE("a misspelled option's suggestion: one edit in a short name, two in a longer one", "[cli]") {
  using nb::cli::nearest;
  const std::vector<std::string> known = {"-p", "--pps", "--rate", "--rx-threads", "--duration", "--dry-run", "--db"};
  CHECK(nearest("--psp", known) == "--pps");  // two letters swapped: one edit
  CHECK(nearest("--rxthreads", known) == "--rx-threads");
  CHECK(nearest("--durration", known) == "--duration");
  CHECK(nearest("-durration", known) == "--duration");
  CHECK(nearest("--dryrun", known) == "--dry-run");
  CHECK(nearest("--dbb", known) == "--db");
  CHECK(nearest("--DURATION", known) == "--duration");
  CHECK_FALSE(nearest("--bogus", known));
  CHECK(nearest("--rat", {"--raw", "--cat"}) == "--raw");  // a tie: the first
  CHECK_FALSE(nearest("--xyz", known));
  CHECK_FALSE(nearest("--durxxxion", known));  // three edits
  CHECK_FALSE(nearest("-q", known));           // one letter: every other letter is as near
}

TEST_CASE("CLI11 apps: the first unknown option of a subcommand is found before its value and later arguments",
          "[cli]") {
  CLI::App app;
  auto* run = app.add_subcommand("run");
  std::string plan;
  double duration = 0;
  run->add_option("plan", plan);
  run->add_option("--duration", duration);
  auto error = [&](std::vector<std::string> args) -> std::string {
    std::reverse(args.begin(), args.end());
    try {
      app.clear();
      app.parse(args);
    } catch (const CLI::Error& e) {
      return nb::cli::describe(app, e);
    }
    return "parsed";
  };
  CHECK(error({"run", "--durration", "5", "lo.toml"}) == "unknown option '--durration' (did you mean '--duration'?)");
  CHECK(error({"run", "lo.toml", "--durration"}) == "unknown option '--durration' (did you mean '--duration'?)");
  CHECK(error({"run", "--durration", "--", "lo.toml"}) == "unknown option '--durration' (did you mean '--duration'?)");
  CHECK(error({"run", "lo.toml", "--duration", "-5"}) == "parsed");  // a negative value is the option's
  CHECK(duration == -5);
  CHECK(error({"run", "lo.toml", "-5"}) == "unexpected argument '-5'");  // a number is no option
  CHECK(error({"run", "a", "b", "c"}) == "unexpected argument 'b'");
  CHECK(error({"run", "--", "a", "--x"}) == "unexpected argument '--x'");  // after "--": an argument
}
