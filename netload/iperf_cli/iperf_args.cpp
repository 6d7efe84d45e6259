#include "netload/iperf_cli/iperf_args.hpp"

#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "netload/iperf_cli/iperf_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace nb::load {
namespace {

// Each tool's defaults, from its sources: iperf3 src/iperf.h, src/iperf_api.h, src/iperf_api.c; iperf2
// src/Settings.cpp (Settings_Initialize, Settings_ModalOptions, kDefault_*).
struct tool_defaults {
  std::uint16_t port;
  double duration_s;  // iperf2: mAmount 1000 in 10-ms units
  double interval_s;  // 0: iperf2 reports only at the end
  std::uint64_t tcp_length;
  std::uint64_t udp_length;    // iperf2: 1450 with -V / -6
  double udp_rate_per_stream;  // "1 Mbit/sec" in their help, a binary mega; TCP unlimited
};

// iperf3 3.1+ takes an unset UDP length from the control connection's MSS, unknown before connecting:
// this takes DEFAULT_UDP_BLKSIZE (1460). Give -l to be exact.
constexpr tool_defaults iperf3_defaults{5201, 10, 1, 128 * 1024, 1460, 1024 * 1024};
constexpr tool_defaults iperf2_defaults{5001, 10, 0, 128 * 1024, 1470, 1024 * 1024};

constexpr std::array<const char*, 4> flags = {"--iperf3", "--iperf2", "--iperf3-translate", "--iperf2-translate"};

bool is_flag(const std::string& a) { return std::find(flags.begin(), flags.end(), a) != flags.end(); }

// The shortest text read back as exactly v.
std::string number_text(double v) { return fmt::format("{}", v); }

// As --rate reads it back exactly: "100M" (decimal suffixes) or digits.
std::string rate_text(double bps) {
  if (bps != std::floor(bps) || bps >= 1e18) return number_text(bps);
  const auto n = static_cast<std::uint64_t>(bps);
  if (n % 1'000'000'000 == 0) return fmt::format("{}G", n / 1'000'000'000);
  if (n % 1'000'000 == 0) return fmt::format("{}M", n / 1'000'000);
  if (n % 1'000 == 0) return fmt::format("{}k", n / 1'000);
  return fmt::format("{}", n);
}

void add_test_options(std::vector<std::string>& g, const iperf::request& r, iperf_flavour f, bool reverse_half) {
  const bool v3 = f == iperf_flavour::iperf3;
  const tool_defaults& d = v3 ? iperf3_defaults : iperf2_defaults;
  const std::uint64_t udp_length = !v3 && r.family == 6 ? 1450 : d.udp_length;
  g.insert(g.end(), {"--", "-m", format_size(r.length.value_or(r.udp ? udp_length : d.tcp_length))});
  if (r.window) {
    // iperf3's server takes -w too; iperf2's for its sender only (-r, -d: mWinBand).
    const std::string w = format_size(*r.window);
    g.insert(g.end(), {"-s", w});
    if (v3 || reverse_half || r.bidir) g.insert(g.end(), {"-S", w});
  }
  if (r.mss) g.insert(g.end(), {"--mss", std::to_string(*r.mss)});
  if (!r.congestion.empty()) g.insert(g.end(), {"-K", r.congestion});
}

// reverse_half: iperf2 -r's second run.
std::vector<std::string> netload_argv(const iperf::request& r, iperf_flavour f, bool reverse_half) {
  const tool_defaults& d = f == iperf_flavour::iperf3 ? iperf3_defaults : iperf2_defaults;
  const double duration = r.duration_s.value_or(d.duration_s);
  std::vector<std::string> g{"-H", r.host,
                             "-p", std::to_string(r.port.value_or(d.port)),
                             "-t", r.udp ? "UDP_STREAM" : "TCP_STREAM",
                             "-l", number_text(duration)};
  if (r.family) g.push_back(r.family == 4 ? "-4" : "-6");
  if (!r.bind.empty()) g.insert(g.end(), {"-L", r.bind});
  if (r.streams > 1) g.insert(g.end(), {"--streams", std::to_string(r.streams)});
  if (r.reverse || reverse_half) g.push_back("--reverse");
  // iperf's -b is per stream; netload's --rate and --pps for all streams together.
  const double per_stream = r.rate.value_or(r.udp ? d.udp_rate_per_stream : 0);
  if (per_stream > 0 && r.rate_in_pps) g.insert(g.end(), {"--pps", number_text(per_stream * r.streams)});
  if (per_stream > 0 && !r.rate_in_pps) g.insert(g.end(), {"--rate", rate_text(per_stream * r.streams)});
  // netload takes no interval longer than the test.
  const double interval = std::min(r.interval_s.value_or(d.interval_s), duration);
  if (interval > 0) g.insert(g.end(), {"--interval", number_text(interval)});
  // iperf3 -A n pins this host only: "n," (a bare "n" would pin the server too).
  if (!r.affinity.empty())
    g.insert(g.end(), {"-T", r.affinity.find(',') == std::string::npos ? r.affinity + "," : r.affinity});
  if (r.json_stream) g.push_back("--json-stream");  // implies -J in iperf3
  else if (r.json) g.push_back("--json");
  if (r.dscp) g.insert(g.end(), {"--dscp", std::to_string(*r.dscp)});
  if (r.format) g.insert(g.end(), {"-f", std::string(1, r.format)});
  if (r.omit_s) g.insert(g.end(), {"--omit", number_text(*r.omit_s)});
  add_test_options(g, r, f, reverse_half);
  return g;
}

void check(const iperf::request& r, iperf_flavour f) {
  const char* tool = iperf::name(f);
  if (r.host.empty())
    throw usage_error(
        fmt::format("{}: -c HOST is required (netload is the client; run netserve where the iperf server runs)", tool));
  if (f == iperf_flavour::iperf3 && r.reverse && r.bidir) throw usage_error("iperf3 takes -R or --bidir, not both");
  if (f == iperf_flavour::iperf2 && r.reverse + r.bidir + r.tradeoff > 1)
    throw usage_error("iperf2 takes one of -d, -r and -R");
  if (r.rate_in_pps && !r.udp) throw usage_error("iperf2 -b in pps: packets per second are for UDP (-u) only");
  // As iperf2's Settings_ModalOptions.
  const std::uint64_t length = r.length.value_or(iperf2_defaults.tcp_length);
  if (f == iperf_flavour::iperf2 && !r.udp && r.rate && !r.rate_in_pps && *r.rate > 0 &&
      *r.rate / 8 < static_cast<double>(length))
    throw usage_error(
        fmt::format("iperf2 takes no TCP -b under -l's {} bytes a second: give -l {} or less, as iperf2 says", length,
                    static_cast<std::uint64_t>(*r.rate / 8)));
}

}  // namespace

namespace iperf {

std::string help_text(iperf_flavour f) {
  const bool v3 = f == iperf_flavour::iperf3;
  return fmt::format(
      "Usage: netload --{0} {8}-CLIENT-OPTIONS...\n"
      "       netload --{0}-translate {8}-CLIENT-OPTIONS...   print the netload command line, run nothing\n\n"
      "Runs the test the {0} client command line asks for against a netserve (start `netserve -p PORT` where the\n"
      "{0} server would run; {0}'s default port is {1}), after one line on stderr saying which netload\n"
      "command line that is.\n\n"
      "  -c HOST               -H HOST\n"
      "  -p PORT               -p PORT (default {1})\n"
      "  -u                    -t UDP_STREAM (else TCP_STREAM)\n"
      "  -t SECONDS            -l SECONDS (default 10)\n"
      "  -l LENGTH             -- -m LENGTH (default TCP 128K, UDP {2})\n"
      "  -b RATE               --rate: RATE per stream times -P (UDP default 1048576 bit/s per stream;\n"
      "                        for TCP a ceiling in both, under it is no miss){3}\n"
      "  -P N                  --streams N\n"
      "  -i SECONDS            --interval SECONDS{4}\n"
      "  -w SIZE               -- -s SIZE{5}\n"
      "  -M MSS                -- --mss MSS\n"
      "  -f k|m|g|K|M|G        -f (the units of the printed rates)\n"
      "  -R                    --reverse\n"
      "{6}"
      "  -4, -6, -B ADDR       -4, -6, -L ADDR\n"
      "  -S TOS                --dscp TOS/4 (ECN bits refused)\n"
      "Units: {7}\n"
      "Any other option is refused, naming it.\n",
      name(f), v3 ? 5201 : 5001, v3 ? "1460" : "1470", v3 ? "" : "; N pps: --pps N times -P", v3 ? " (default 1)" : "",
      v3 ? " -S SIZE (iperf3 sets both ends)" : " (and -S SIZE in -r's reverse run and with -d)",
      v3 ? "  --bidir               --bidir\n  -A N[,M]              -T N,[M]\n  -C ALGO               -- -K ALGO\n"
           "  -J, --json-stream     --json, --json-stream\n  --dscp N              --dscp N\n"
           "  --dont-fragment, --udp-counters-64bit: accepted, netload always does both\n"
           "  -Z                    accepted: netload's TCP sender uses sendfile() already\n"
           "  -O N                  --omit N (the test runs N + -t seconds; the first N are left out)\n"
         : "  -d                    --bidir (both ways at once)\n  -r                    two runs: forward, then --reverse\n"
           "  -Z ALGO               -- -K ALGO\n  -m                    accepted: netload always reports the MSS\n"
           "  -e                    accepted: netload's report always has pps, loss, jitter, retransmits, cwnd, RTT\n",
      v3 ? "sizes (-l, -w) K M G = 1024^n and rates (-b) k m g = 1000^n, in either case"
         : "K M G = 1024^n, k m g = 1000^n, for every option (-b 9G is 9 * 2^30 bit/s)",
      v3 ? "IPERF3" : "IPERF2");
}

}  // namespace iperf

std::string iperf_translation::netload_command() const {
  std::string s;
  for (const auto& a : netload_args) s += (s.empty() ? "netload " : " && netload ") + quote_argv(a);
  return s;
}

std::string iperf_translation::summary() const {
  return fmt::format("{} {} = {}", iperf::name(flavour), quote_argv(iperf_args), netload_command());
}

bool is_iperf_command(const std::vector<std::string>& args) {
  if (!args.empty() && is_flag(args[0])) return true;
  for (const auto& a : args)
    if (is_flag(a)) throw usage_error(fmt::format("{} goes first: everything after it is iperf's command line", a));
  return false;
}

std::optional<iperf_translation> translate_iperf(const std::vector<std::string>& args) {
  iperf_translation t;
  t.flavour = args.at(0).starts_with("--iperf2") ? iperf_flavour::iperf2 : iperf_flavour::iperf3;
  t.translate_only = args[0].ends_with("-translate");
  t.iperf_args.assign(args.begin() + 1, args.end());
  iperf::request r;
  if (!iperf::read_command_line(t.flavour, t.iperf_args, r)) return std::nullopt;
  check(r, t.flavour);
  for (int half = 0; half < (r.tradeoff ? 2 : 1); ++half) {
    auto argv = netload_argv(r, t.flavour, half == 1);
    std::optional<client_options> o;
    try {
      o = parse_command_line(argv);
      if (!o) throw std::logic_error("a translation asked for help");
    } catch (const usage_error& e) {
      throw usage_error(fmt::format("{} (the translation of {} {}: netload {})", e.what(), iperf::name(t.flavour),
                                    quote_argv(t.iperf_args), quote_argv(argv)));
    }
    if (r.bidir) {
      o->bidir = true;
      argv.insert(std::find(argv.begin(), argv.end(), "--"), "--bidir");
      o->argv = argv;
    }
    t.netload_args.push_back(std::move(argv));
    t.runs.push_back(std::move(*o));
  }
  return t;
}

}  // namespace nb::load
