// netload --iperf3 / --iperf2: iperf client command lines, the seed's verbatim, into netload runs.
// Translated only: nothing is ever sent to the addresses in these lines.
#include "core/sys/socket.hpp"
#include "netload/iperf_cli/iperf_args.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <tuple>

using namespace nb::load;

namespace {

iperf_translation translate(std::vector<std::string> args) {
  auto t = translate_iperf(args);
  REQUIRE(t);
  return *t;
}

// Every field a test depends on (the command line as given, argv, is not one).
auto fields(const client_options& o) {
  return std::make_tuple(o.host, o.port, o.local_address, o.family, o.kind, o.duration_s, o.message_size,
                         o.local_buffer, o.remote_buffer, o.local_cpu, o.remote_cpu, o.mss, o.congestion, o.rate_bps,
                         o.pps, o.interval_s, o.json, o.json_stream, o.streams, o.reverse, o.dscp, o.gso, o.gro,
                         o.batch, o.recv_size, o.rate_units, o.omit_s);
}

// A POSIX shell's words, for the plain and single-quoted words netload_command() writes.
std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false, quoted = false;
  for (char c : line) {
    if (quoted) {
      if (c == '\'') quoted = false;
      else word += c;
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == ' ') {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(word);
  return out;
}

// The printed command line, pasted: each run's words through the normal parser give the same options.
void check_printed_line_runs_the_same(const iperf_translation& t) {
  auto words = shell_words(t.netload_command());
  std::vector<std::vector<std::string>> commands;
  for (const auto& w : words) {
    if (w == "netload") commands.emplace_back();
    else if (w != "&&") commands.back().push_back(w);
  }
  REQUIRE(commands.size() == t.runs.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    INFO(t.netload_command());
    // --bidir belongs to the parser of the bidirectional change; until then, the field is compared apart.
    auto bidir = std::find(commands[i].begin(), commands[i].end(), "--bidir");
    const bool has_bidir = bidir != commands[i].end();
    if (has_bidir) commands[i].erase(bidir);
    auto parsed = parse_command_line(commands[i]);
    REQUIRE(parsed);
    CHECK(fields(*parsed) == fields(t.runs[i]));
    CHECK(has_bidir == t.runs[i].bidir);
  }
}

bool cpu_allowed(int cpu) {
  auto cpus = nb::allowed_cpus();
  return std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
}

constexpr double udp_default_rate = 1024 * 1024;  // iperf3's UDP_RATE, iperf2's kDefault_UDPRate

}  // namespace

TEST_CASE("the seed's iperf3 line translates verbatim, duration included", "[iperf]") {
  // PROCEDURES.md A4: iperf3 -u -l 16 -b 100m -t 120 -c 192.168.100.1 -i 1 -p 16001 -A 1
  const std::vector<std::string> line{"--iperf3",      "-u", "-l", "16", "-b",    "100m", "-t", "120", "-c",
                                      "192.168.100.1", "-i", "1",  "-p", "16001", "-A",   "1"};
  if (!cpu_allowed(1)) {
    CHECK_THROWS_WITH(translate_iperf(line), Catch::Contains("CPU 1"));
    return;
  }
  auto t = translate(line);
  REQUIRE(t.runs.size() == 1);
  const auto& o = t.runs[0];
  CHECK(o.host == "192.168.100.1");
  CHECK(o.port == 16001);
  CHECK(o.kind == nb::test_kind::udp_stream);
  CHECK(o.duration_s == 120);
  CHECK(o.message_size == 16);
  CHECK(o.rate_bps == 100e6);  // iperf3 rates are decimal: 100m = 10^8
  CHECK(o.target_pps() == Approx(781250));
  CHECK(o.interval_s == 1);
  CHECK(o.local_cpu == 1);
  CHECK(o.remote_cpu == -1);  // -A n pins this host only
  CHECK(o.streams == 1);
  CHECK_FALSE(o.reverse);
  CHECK(t.summary() ==
        "iperf3 -u -l 16 -b 100m -t 120 -c 192.168.100.1 -i 1 -p 16001 -A 1 = "
        "netload -H 192.168.100.1 -p 16001 -t UDP_STREAM -l 120 --rate 100M --interval 1 -T 1, -- -m 16");
  check_printed_line_runs_the_same(t);
}

TEST_CASE("the seed's eighth iperf3 instance asks for CPU 8", "[iperf]") {
  // ... -p 16008 -A 8, in the client role of A4.
  const std::vector<std::string> line{"--iperf3", "-u",         "-l", "16", "-b", "100m",  "-t", "120",
                                      "-c",       "172.16.0.2", "-i", "1",  "-p", "16008", "-A", "8"};
  if (!cpu_allowed(8)) {
    CHECK_THROWS_WITH(translate_iperf(line), Catch::Contains("-T 8,: this process may not run on CPU 8") &&
                                                 Catch::Contains("the translation of iperf3"));
    return;
  }
  auto t = translate(line);
  CHECK(t.runs[0].port == 16008);
  CHECK(t.runs[0].local_cpu == 8);
}

TEST_CASE("the OCI tutorial's final iperf2 line: -b is per thread, 9G is 9 * 2^30", "[iperf]") {
  auto t = translate({"--iperf2", "-c", "172.16.1.50", "-b", "9G", "-P", "5"});
  REQUIRE(t.runs.size() == 1);
  const auto& o = t.runs[0];
  CHECK(o.host == "172.16.1.50");
  CHECK(o.port == 5001);
  CHECK(o.kind == nb::test_kind::tcp_stream);
  CHECK(o.duration_s == 10);
  CHECK(o.streams == 5);
  CHECK(o.rate_bps == 5 * 9.0 * (1 << 30));
  CHECK(o.message_size == 128 * 1024);
  CHECK(o.interval_s == 0);
  CHECK(t.summary() ==
        "iperf2 -c 172.16.1.50 -b 9G -P 5 = netload -H 172.16.1.50 -p 5001 -t TCP_STREAM -l 10 --streams 5 "
        "--rate 48318382080 -- -m 128K");
  check_printed_line_runs_the_same(t);
  auto eleven = translate({"--iperf2", "-c", "172.16.1.93", "-b", "9G", "-P", "11"});
  CHECK(eleven.runs[0].rate_bps == 11 * 9.0 * (1 << 30));
  check_printed_line_runs_the_same(eleven);
}

TEST_CASE("the OCI tutorial's other iperf2 lines", "[iperf]") {
  SECTION("-M 1200") {
    auto t = translate({"--iperf2", "-c", "172.16.1.93", "-b", "9G", "-P", "5", "-M", "1200"});
    CHECK(t.runs[0].mss == 1200);
    CHECK(t.runs[0].recv_size == 0);  // iperf's -M is the MSS: netload's --mss, not netperf's -M (receive size)
    CHECK_THAT(t.netload_command(), Catch::Contains("--mss 1200") && !Catch::Contains("-M"));
    check_printed_line_runs_the_same(t);
  }
  SECTION("UDP at rising rates: 10m to 100000m, lower case is decimal") {
    for (auto [text, bps] :
         {std::pair{"10m", 1e7}, {"100m", 1e8}, {"1000m", 1e9}, {"10000m", 1e10}, {"100000m", 1e11}}) {
      auto t = translate({"--iperf2", "-c", "172.16.1.50", "-u", "-b", text});
      CHECK(t.runs[0].kind == nb::test_kind::udp_stream);
      CHECK(t.runs[0].rate_bps == bps);
      CHECK(t.runs[0].message_size == 1470);
      check_printed_line_runs_the_same(t);
    }
  }
  SECTION("-m prints the MSS, which netload's report always does") {
    auto t = translate({"--iperf2", "-c", "172.16.1.50", "-m"});
    CHECK(fields(t.runs[0]) == fields(translate({"--iperf2", "-c", "172.16.1.50"}).runs[0]));
  }
  SECTION("-P 2") {
    auto t = translate({"--iperf2", "-c", "172.16.1.50", "-P", "2"});
    CHECK(t.runs[0].streams == 2);
    CHECK(t.runs[0].rate_bps == 0);
  }
  SECTION("-r -w 2000 and -r -w 4000: forward, then reverse, each with the window") {
    for (std::int32_t w : {2000, 4000}) {
      auto t = translate({"--iperf2", "-c", "172.16.1.50", "-r", "-w", std::to_string(w)});
      REQUIRE(t.runs.size() == 2);
      CHECK_FALSE(t.runs[0].reverse);
      CHECK(t.runs[0].local_buffer == w);
      CHECK(t.runs[0].remote_buffer == 0);  // the forward half: the server's receiver keeps its own -w
      CHECK(t.runs[1].reverse);
      CHECK(t.runs[1].local_buffer == w);
      CHECK(t.runs[1].remote_buffer == w);  // the server's sender takes the client's -w
      CHECK_THAT(t.netload_command(), Catch::Contains(" && netload "));
      check_printed_line_runs_the_same(t);
    }
  }
  SECTION("written as iPerf3 in the tutorial, -r is iperf2's") {
    CHECK_THROWS_WITH(translate_iperf({"--iperf3", "-c", "172.16.1.50", "-r", "-w", "2000"}),
                      Catch::Contains("iperf3 has no option -r") && Catch::Contains("--iperf2"));
  }
  SECTION("plain iPerf3 -c") {
    auto t = translate({"--iperf3", "-c", "172.16.0.252"});
    const auto& o = t.runs[0];
    CHECK(o.port == 5201);
    CHECK(o.kind == nb::test_kind::tcp_stream);
    CHECK(o.duration_s == 10);
    CHECK(o.message_size == 128 * 1024);
    CHECK(o.interval_s == 1);
    CHECK(o.rate_bps == 0);
    check_printed_line_runs_the_same(t);
  }
}

TEST_CASE("each tool's defaults and units", "[iperf]") {
  SECTION("UDP without -b: 1024 * 1024 bit/s per stream") {
    CHECK(translate({"--iperf3", "-c", "h", "-u", "-P", "3"}).runs[0].rate_bps == 3 * udp_default_rate);
    CHECK(translate({"--iperf2", "-c", "h", "-u"}).runs[0].rate_bps == udp_default_rate);
    CHECK(translate({"--iperf3", "-c", "h", "-u", "-b", "0"}).runs[0].rate_bps == 0);  // 0: unlimited
  }
  SECTION("UDP lengths: iperf3 1460, iperf2 1470 (1450 for IPv6)") {
    CHECK(translate({"--iperf3", "-c", "h", "-u"}).runs[0].message_size == 1460);
    CHECK(translate({"--iperf2", "-c", "h", "-u"}).runs[0].message_size == 1470);
    CHECK(translate({"--iperf2", "-c", "::1", "-u", "-V"}).runs[0].message_size == 1450);
  }
  SECTION("iperf3: sizes binary and rates decimal, whatever the case") {
    auto t = translate({"--iperf3", "-c", "h", "-l", "1k", "-w", "2M", "-b", "1K", "-u"});
    CHECK(t.runs[0].message_size == 1024);
    CHECK(t.runs[0].local_buffer == 2 << 20);
    CHECK(t.runs[0].remote_buffer == 2 << 20);  // iperf3 sends -w to the server
    CHECK(t.runs[0].rate_bps == 1000);
    check_printed_line_runs_the_same(t);
  }
  SECTION("iperf2: upper case binary, lower case decimal, for every option") {
    auto t = translate({"--iperf2", "-c", "h", "-l", "1k", "-w", "2K", "-b", "1M", "-u"});
    CHECK(t.runs[0].message_size == 1000);
    CHECK(t.runs[0].local_buffer == 2048);
    CHECK(t.runs[0].remote_buffer == 0);  // iperf2's client sets its own socket only
    CHECK(t.runs[0].rate_bps == 1024 * 1024);
    check_printed_line_runs_the_same(t);
  }
  SECTION("iperf2 packets per second, per thread") {
    auto t = translate({"--iperf2", "-c", "h", "-u", "-b", "1000pps", "-P", "2"});
    CHECK(t.runs[0].pps == 2000);
    CHECK(t.runs[0].rate_bps == 0);
    check_printed_line_runs_the_same(t);
    CHECK_THROWS_WITH(translate_iperf({"--iperf2", "-c", "h", "-b", "1000pps"}), Catch::Contains("UDP (-u) only"));
  }
  SECTION("an interval longer than the test is the test's length") {
    CHECK(translate({"--iperf3", "-c", "h", "-t", "1", "-i", "2"}).runs[0].interval_s == 1);
    CHECK(translate({"--iperf3", "-c", "h", "-i", "0"}).runs[0].interval_s == 0);
    CHECK(translate({"--iperf2", "-c", "h", "-t", "2.5", "-i", "0.5"}).runs[0].duration_s == 2.5);
  }
}

TEST_CASE("each mapped iperf option", "[iperf]") {
  const int cpu = nb::allowed_cpus().at(0);  // this host's CPU must be one this process may use
  auto t = translate({"--iperf3", "-c", "h", "-R", "-M", "1400", "-A", std::to_string(cpu) + ",5", "-J", "-C", "reno",
                      "-S", "0xb8", "-4", "-B", "127.0.0.1"});
  const auto& o = t.runs[0];
  CHECK(o.reverse);
  CHECK(o.mss == 1400);
  CHECK(o.local_cpu == cpu);
  CHECK(o.remote_cpu == 5);
  CHECK(o.json);
  CHECK(o.congestion == "reno");
  CHECK(o.dscp == 46);  // TOS 0xb8: EF
  CHECK(o.family == AF_INET);
  CHECK(o.local_address == "127.0.0.1");
  check_printed_line_runs_the_same(t);
  CHECK(translate({"--iperf3", "-c", "h", "--json-stream"}).runs[0].json_stream);
  CHECK(translate({"--iperf2", "-c", "h", "-Z", "cubic", "-R"}).runs[0].congestion == "cubic");

  SECTION("both directions at once: iperf3 --bidir, iperf2 -d") {
    for (auto flags :
         {std::vector<std::string>{"--iperf3", "-c", "h", "--bidir"}, {"--iperf2", "-c", "h", "-d", "-w", "64K"}}) {
      auto b = translate(flags);
      REQUIRE(b.runs.size() == 1);
      CHECK(b.runs[0].bidir);
      CHECK_FALSE(b.runs[0].reverse);
      CHECK_THAT(b.netload_command(), Catch::Contains("--bidir --"));
      check_printed_line_runs_the_same(b);
    }
  }
  SECTION("getopt's spellings: bundled, attached, --long=value") {
    auto a = translate({"--iperf3", "-uc", "h", "-l16", "--parallel=2", "--time", "3"});
    CHECK(a.runs[0].kind == nb::test_kind::udp_stream);
    CHECK(a.runs[0].host == "h");
    CHECK(a.runs[0].message_size == 16);
    CHECK(a.runs[0].streams == 2);
    CHECK(a.runs[0].duration_s == 3);
  }
  SECTION("a host a shell would split is quoted") {
    auto q = translate({"--iperf3", "-c", "a b"});
    CHECK_THAT(q.netload_command(), Catch::StartsWith("netload -H 'a b' -p 5201"));
  }
  SECTION("the translate-only flag") {
    CHECK(translate({"--iperf2-translate", "-c", "h"}).translate_only);
    CHECK_FALSE(translate({"--iperf2", "-c", "h"}).translate_only);
  }
}

TEST_CASE("iperf3 -Z (sendfile) is netload's own TCP send: accepted, nothing to add", "[iperf]") {
  const auto t = translate({"--iperf3", "-c", "h", "-Z"});
  REQUIRE(t.runs.size() == 1);
  CHECK_FALSE(t.runs[0].send_copy);
  CHECK_FALSE(t.runs[0].zerocopy);  // MSG_ZEROCOPY is another thing: netload --zerocopy
}

TEST_CASE("an iperf option with no netload equivalent is an error naming it", "[iperf]") {
  auto refused = [](std::vector<std::string> args, const std::string& text) {
    INFO(args.back());
    CHECK_THROWS_AS(translate_iperf(args), usage_error);
    CHECK_THROWS_WITH(translate_iperf(args), Catch::Contains(text));
  };
  refused({"--iperf3", "-c", "h", "--logfile", "x"},
          "iperf3 option --logfile (output to a file) has no netload equivalent");
  refused({"--iperf3", "-c", "h", "-O", "601"}, "iperf3 -O 601: iperf3 takes at most 600 seconds");
  refused({"--iperf3", "-c", "h", "-f", "t"}, "iperf3 -f t: netload prints k, m, g");
  refused({"--iperf2", "-c", "h", "-f", "a"}, "iperf2 -f a: netload prints k, m, g");
  refused({"--iperf3", "-c", "h", "-T", "x"}, "option -T");
  refused({"--iperf3", "-c", "h", "-d"}, "iperf3 option -d (debug output");
  refused({"--iperf3", "-s"}, "run netserve there");
  refused({"--iperf3", "-c", "h", "--frobnicate"}, "iperf3 option --frobnicate is not one netload translates");
  refused({"--iperf3", "-c", "h", "--bitrat", "1m"},
          "option --bitrat is not one netload translates (did you mean --bitrate?");
  refused({"--iperf2", "-c", "h", "--bandwith", "1m"},
          "option --bandwith is not one netload translates (did you mean --bandwidth?");
  refused({"--iperf2", "-c", "h", "-J"}, "iperf2 has no option -J");
  refused({"--iperf2", "-c", "h", "--full-duplex"}, "option --full-duplex");
  refused({"--iperf3", "-c", "h", "-b", "100m/10"}, "iperf3 -b 100m/10: burst mode");
  refused({"--iperf2", "-c", "h", "-b", "10m,1m"}, "varying load");
  refused({"--iperf3", "-c", "h", "-t", "0"}, "iperf3 -t 0: a test until interrupted");
  refused({"--iperf2", "-c", "h", "-t", "-1"}, "-t -1");
  refused({"--iperf2", "-c", "h", "-p", "5001-5004"}, "port range");
  refused({"--iperf3", "-c", "h", "-P", "100"}, "-P 100: netload runs at most 64 streams");
  refused({"--iperf3", "-c", "h", "-S", "0xb9"}, "ECN bits");
  refused({"--iperf3", "-c", "h%eth0"}, "HOST%DEV");
  refused({"--iperf3", "-c", "h", "-l", "1x"}, "unknown suffix 'x'");
  refused({"--iperf3", "-c", "h", "-l"}, "iperf3 option -l needs a value");
  refused({"--iperf3", "-u"}, "-c HOST is required");
  refused({"--iperf3", "-c", "h", "extra"}, "unexpected argument 'extra'");
  refused({"--iperf3", "-c", "h", "-R", "--bidir"}, "-R or --bidir");
  refused({"--iperf2", "-c", "h", "-d", "-r"}, "one of -d, -r and -R");
  refused({"--iperf2", "-c", "h", "-b", "1m"}, "give -l 125000 or less");  // iperf2's own refusal
  CHECK(translate({"--iperf2", "-c", "h", "-b", "1m", "-l", "125000"}).runs[0].rate_bps == 1e6);
  refused({"--iperf3", "-c", "h", "-u", "-M", "1200"}, "--mss applies to TCP tests only (the translation of iperf3");
  CHECK_THROWS_WITH(is_iperf_command({"-H", "h", "--iperf3"}), Catch::Contains("--iperf3 goes first"));
  CHECK_FALSE(is_iperf_command({"-H", "h"}));
  CHECK(is_iperf_command({"--iperf2-translate"}));
}

TEST_CASE("pasted display options: -f (both tools), iperf3 -O (omit), iperf2 -e", "[iperf]") {
  // -f: k m g bits (10^3n), K M G bytes (2^10n) in iperf2, iperf3 and netperf alike: netload's -f.
  for (const char* tool : {"--iperf2", "--iperf3"}) {
    for (const char* f : {"k", "m", "g", "K", "M", "G"}) {
      auto t = translate({tool, "-c", "h", "-f", f});
      CHECK(t.runs[0].rate_units == f[0]);
      check_printed_line_runs_the_same(t);
    }
  }
  // -O N: the test runs N + -t seconds and leaves the first N out; iperf3 reports every second.
  auto omit = translate({"--iperf3", "-c", "h", "-t", "5", "-O", "2"});
  CHECK(omit.runs[0].omit_s == 2);
  CHECK(omit.runs[0].duration_s == 7);
  CHECK(omit.runs[0].interval_s == 1);
  CHECK_THAT(omit.netload_command(), Catch::Contains("-l 5 ") && Catch::Contains("--omit 2"));
  check_printed_line_runs_the_same(omit);
  CHECK(translate({"--iperf3", "-c", "h", "-O", "0"}).runs[0].omit_s == 0);
  // iperf2 -e: enhanced reports, which netload's report always is: accepted, nothing added.
  auto enhanced = translate({"--iperf2", "-c", "h", "-e", "-f", "m"});
  CHECK(fields(enhanced.runs[0]) == fields(translate({"--iperf2", "-c", "h", "-f", "m"}).runs[0]));
}
