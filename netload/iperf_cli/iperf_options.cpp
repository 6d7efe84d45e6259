#include "netload/iperf_cli/iperf_options.hpp"

#include "core/base/cli_help.hpp"
#include "core/base/limits.hpp"
#include "core/base/whole_number.hpp"

#include <fmt/format.h>
#include <getopt.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace nb::load::iperf {
namespace {

// One option as the user spelled it, with its value, for the handler and its error messages.
struct arg {
  const char* tool;
  std::string spelled, value;
  [[noreturn]] void fail(const std::string& why) const {
    throw usage_error(fmt::format("{} {} {}: {}", tool, spelled, value, why));
  }
};

// A plain decimal number, then at most one suffix letter: iperf reads "100m", "1.5K", "9G".
struct number {
  double value;
  char suffix;  // 0 when none
};

number split_number(const arg& a) {
  std::string_view t = a.value;
  char suffix = 0;
  if (!t.empty() && std::isalpha(static_cast<unsigned char>(t.back()))) {
    suffix = t.back();
    t.remove_suffix(1);
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc{} || end != t.data() + t.size() || !std::isfinite(v) || v < 0)
    a.fail("not a number");
  return {v, suffix};
}

double plain_number(const arg& a) {
  const auto [v, suffix] = split_number(a);
  if (suffix) a.fail("a number of seconds, no suffix");
  return v;
}

double power(char suffix, double base, const arg& a) {
  switch (std::tolower(static_cast<unsigned char>(suffix))) {
    case 0: return 1;
    case 'k': return base;
    case 'm': return base * base;
    case 'g': return base * base * base;
    case 't': return base * base * base * base;
    default: a.fail(fmt::format("unknown suffix '{}' (k, m, g, t)", suffix));
  }
}

// iperf3 (src/units.c): sizes (-l, -w) in powers of 1024 and rates (-b) in powers of 1000, whatever the
// letter's case: unit_atoi / unit_atof use KILO_UNIT 1024, unit_atof_rate KILO_RATE_UNIT 1000.
double iperf3_size(const arg& a) {
  const auto [v, s] = split_number(a);
  return v * power(s, 1024, a);
}
double iperf3_rate(const arg& a) {
  const auto [v, s] = split_number(a);
  return v * power(s, 1000, a);
}

// iperf2 (src/stdio.c, byte_atoi, for every numeric option, -b included): upper case K M G are powers of
// 1024, lower case k m g powers of 1000. "-b 9G" is 9 * 2^30 bits a second.
double iperf2_number(const arg& a) {
  const auto [v, s] = split_number(a);
  switch (s) {
    case 0: return v;
    case 'K': return v * 1024;
    case 'M': return v * 1024 * 1024;
    case 'G': return v * 1024 * 1024 * 1024;
    case 'k': return v * 1e3;
    case 'm': return v * 1e6;
    case 'g': return v * 1e9;
    default: a.fail(fmt::format("unknown suffix '{}' (iperf2: k m g decimal, K M G binary)", s));
  }
}

// Bytes are whole (iperf truncates); 0 means "not set", iperf's own reading of 0 for -l, -w and -M.
std::optional<std::uint64_t> bytes(double v) {
  const auto whole = static_cast<std::uint64_t>(std::floor(std::min(v, 1e15)));
  if (whole == 0) return std::nullopt;
  return whole;
}

void host(request& r, const arg& a) {
  if (a.value.find('%') != std::string::npos) a.fail("binding to a device (HOST%DEV) has no netload equivalent");
  r.host = a.value;
}
void port(request& r, const arg& a) {
  const auto p = parse_whole<std::uint16_t>(a.value, 1, 65535);
  if (!p)
    a.fail(a.value.find('-') != std::string::npos ? "a port range has no netload equivalent (a test has one port)"
                                                  : "a port is a whole number from 1 to 65535");
  r.port = *p;
}
void udp(request& r, const arg&) { r.udp = true; }
void length3(request& r, const arg& a) { r.length = bytes(iperf3_size(a)); }
void length2(request& r, const arg& a) { r.length = bytes(iperf2_number(a)); }
void window3(request& r, const arg& a) { r.window = bytes(iperf3_size(a)); }
void window2(request& r, const arg& a) { r.window = bytes(iperf2_number(a)); }

void rate3(request& r, const arg& a) {
  if (a.value.find('/') != std::string::npos) a.fail("burst mode (RATE/COUNT) has no netload equivalent");
  r.rate = iperf3_rate(a);
  r.rate_in_pps = false;
}
// iperf2 (Settings.cpp, case 'b'): a 'p' anywhere means packets per second ("1000pps"); ",STDEV" a varying load.
void rate2(request& r, const arg& a) {
  if (a.value.find(',') != std::string::npos) a.fail("a varying load (MEAN,STDEV) has no netload equivalent");
  const auto p = a.value.find_first_of("pP");
  r.rate_in_pps = p != std::string::npos;
  r.rate = iperf2_number(r.rate_in_pps ? arg{a.tool, a.spelled, a.value.substr(0, p)} : a);
}

// iperf3 reads -t with atoi: whole seconds, 0 = until interrupted; at most MAX_TIME (86400).
void time3(request& r, const arg& a) {
  const double v = std::floor(plain_number(a));
  if (v < 1) a.fail("a test until interrupted has no netload equivalent (a netload test has a duration)");
  if (v > 86400) a.fail("iperf3 takes at most 86400 seconds");
  r.duration_s = v;
}
// iperf2 reads -t with strtod in units of 10 ms; 0 or less = until interrupted.
void time2(request& r, const arg& a) {
  const double v = std::floor(plain_number(a) * 100) / 100;
  if (v <= 0) a.fail("a test until interrupted has no netload equivalent (a netload test has a duration)");
  r.duration_s = v;
}
void interval3(request& r, const arg& a) {
  const double v = plain_number(a);
  if (v != 0 && (v < 0.1 || v > 60)) a.fail("iperf3 takes 0 (no reports) or 0.1 to 60 seconds");
  r.interval_s = v;
}
void interval2(request& r, const arg& a) {
  if (!a.value.empty() && (a.value[0] == 'f' || a.value[0] == 'F'))
    a.fail("intervals in frames have no netload equivalent");
  r.interval_s = plain_number(a);
}
void parallel(request& r, const arg& a) {
  const auto n = parse_whole<std::uint32_t>(a.value, 1);
  if (!n) a.fail("a stream count is a whole number from 1");
  if (*n > max_streams_per_test) a.fail(fmt::format("netload runs at most {} streams per test", max_streams_per_test));
  r.streams = *n;
}
void reverse(request& r, const arg&) { r.reverse = true; }
void bidir(request& r, const arg&) { r.bidir = true; }
void tradeoff(request& r, const arg&) { r.tradeoff = true; }

void mss3(request& r, const arg& a) {
  const auto m = parse_whole<std::uint32_t>(a.value, 0, max_mss);
  if (!m) a.fail(fmt::format("an MSS is a whole number from 0 to {}", max_mss));
  r.mss = *m ? std::optional<std::uint32_t>(*m) : std::nullopt;
}
void mss2(request& r, const arg& a) {
  const auto m = bytes(iperf2_number(a));
  if (m && *m > max_mss) a.fail(fmt::format("an MSS is at most {}", max_mss));
  r.mss = m ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*m)) : std::nullopt;
}
// -f: iperf2 and iperf3 read k m g as 10^3n bits and K M G as 2^10n bytes per second, as netperf and
// netload's -f do (iperf3 src/units.c unit_snprintf, iperf2 src/stdio.c byte_snprintf).
void format(request& r, const arg& a) {
  if (a.value.size() != 1 || std::string_view("kmgKMG").find(a.value[0]) == std::string_view::npos)
    a.fail(
        "netload prints k, m, g (10^3, 10^6, 10^9 bit/s) or K, M, G (2^10, 2^20, 2^30 byte/s); not adaptive, "
        "tera or plain bits/bytes");
  r.format = a.value[0];
}
// iperf3 -O N (atoi, 0 to 600 in 3.12): the first N seconds run but are left out of the result.
void omit3(request& r, const arg& a) {
  const double v = std::floor(plain_number(a));
  if (v > 600) a.fail("iperf3 takes at most 600 seconds");
  r.omit_s = v > 0 ? std::optional<double>(v) : std::nullopt;
}
// iperf3 -A n[,m]: this host's CPU n, and with ",m" the server's CPU m for this test (0 to 1024 each).
void affinity3(request& r, const arg& a) {
  const auto comma = a.value.find(',');
  const bool ok = parse_whole<int>(a.value.substr(0, comma), 0, 1024) &&
                  (comma == std::string::npos || parse_whole<int>(a.value.substr(comma + 1), 0, 1024));
  if (!ok) a.fail("a CPU number n, or n,m for this host and the server");
  r.affinity = a.value;
}
void json(request& r, const arg&) { r.json = true; }
void json_stream(request& r, const arg&) { r.json_stream = true; }
void v4(request& r, const arg&) { r.family = 4; }
void v6(request& r, const arg&) { r.family = 6; }
void bind(request& r, const arg& a) {
  if (a.value.find('%') != std::string::npos) a.fail("binding to a device (ADDR%DEV) has no netload equivalent");
  r.bind = a.value;
}
void congestion(request& r, const arg& a) { r.congestion = a.value; }
// iperf3 -Z sends TCP with sendfile(), which netload's TCP sender does unless told --send-copy.
void sendfile3(request&, const arg&) {}

long c_number(const arg& a, long hi) {  // strtol base 0, as iperf: 0x.. hex, 0.. octal, decimal
  char* end = nullptr;
  const long v = std::strtol(a.value.c_str(), &end, 0);
  if (a.value.empty() || *end != '\0' || v < 0 || v > hi) a.fail(fmt::format("a number from 0 to {}", hi));
  return v;
}
// -S TOS: netload sets the DSCP, the TOS byte's upper six bits; ECN bits asked for are refused, not dropped.
void tos(request& r, const arg& a) {
  const long v = c_number(a, 255);
  if (v & 3) a.fail("the ECN bits (the lowest two) have no netload equivalent; netload sets the DSCP only");
  r.dscp = static_cast<int>(v >> 2);
}
void dscp(request& r, const arg& a) { r.dscp = static_cast<int>(c_number(a, max_dscp)); }
// Accepted, and changing nothing: what they ask for, netload always does (listed in the README).
void always(request&, const arg&) {}

using apply_fn = void (*)(request&, const arg&);

struct option_spec {
  char short_name;        // 0: long only
  const char* long_name;  // nullptr: short only
  bool takes_value;
  apply_fn apply;        // nullptr: refused
  const char* why = "";  // refused: what it does; "!..." a whole sentence instead
};

const std::vector<option_spec>& iperf3_options() {
  // a table, laid out by hand (clang-format would give each entry its own line)
  // clang-format off
  static const std::vector<option_spec> t = {
      {'c', "client", true, host}, {'p', "port", true, port}, {'u', "udp", false, udp}, {'l', "length", true, length3},
      {'b', "bitrate", true, rate3}, {0, "bandwidth", true, rate3}, {'t', "time", true, time3},
      {'i', "interval", true, interval3}, {'P', "parallel", true, parallel}, {'R', "reverse", false, reverse},
      {0, "bidir", false, bidir}, {'w', "window", true, window3}, {'M', "set-mss", true, mss3},
      {'A', "affinity", true, affinity3}, {'J', "json", false, json}, {0, "json-stream", false, json_stream},
      {'4', "version4", false, v4}, {'6', "version6", false, v6}, {'B', "bind", true, bind},
      {'C', "congestion", true, congestion}, {0, "linux-congestion", true, congestion}, {'S', "tos", true, tos},
      {0, "dscp", true, dscp}, {0, "dont-fragment", false, always}, {0, "udp-counters-64bit", false, always},
      {'s', "server", false, nullptr, "server mode: run netserve there"}, {'D', "daemon", false, nullptr, "server mode"},
      {'1', "one-off", false, nullptr, "server mode"}, {'n', "bytes", true, nullptr, "a byte count instead of a duration"},
      {'k', "blockcount", true, nullptr, "a block count instead of a duration"},
      {'O', "omit", true, omit3},
      {'T', "title", true, nullptr, "a title on every output line"}, {'f', "format", true, format},
      {'V', "verbose", false, nullptr, "verbose output"},
      {'d', "debug", false, nullptr, "debug output; both directions at once is --bidir"},
      {'Z', "zerocopy", false, sendfile3},
      {'N', "no-delay", false, nullptr, "TCP_NODELAY"}, {'F', "file", true, nullptr, "a file as the data"},
      {'I', "pidfile", true, nullptr, "a PID file"}, {'L', "flowlabel", true, nullptr, "the IPv6 flow label"},
      {'m', "mptcp", false, nullptr, "multipath TCP"}, {'X', "xbind", true, nullptr, "SCTP bind addresses"},
      {'v', "version", false, nullptr, "iperf's version"},
      {'r', nullptr, false, nullptr, "!-r is iperf2's (the two directions one after the other): use netload --iperf2"},
      {0, "logfile", true, nullptr, "output to a file"}, {0, "forceflush", false, nullptr, "output flushing"},
      {0, "timestamps", false, nullptr, "timestamps on output lines"}, {0, "cport", true, nullptr, "a fixed client port"},
      {0, "sctp", false, nullptr, "SCTP"}, {0, "get-server-output", false, nullptr, "the server's output"},
      {0, "repeating-payload", false, nullptr, "a repeating payload pattern"},
      {0, "fq-rate", true, nullptr, "fair-queue pacing; netload paces with --rate"},
      {0, "connect-timeout", true, nullptr, "in milliseconds; netload's --connect-timeout takes seconds"},
      {0, "username", true, nullptr, "authentication; netload's is --psk-file"},
      {0, "rsa-public-key-path", true, nullptr, "authentication; netload's is --psk-file"}};
  // clang-format on
  return t;
}

const std::vector<option_spec>& iperf2_options() {
  // a table, laid out by hand (clang-format would give each entry its own line)
  // clang-format off
  static const std::vector<option_spec> t = {
      {'c', "client", true, host}, {'p', "port", true, port}, {'u', "udp", false, udp}, {'l', "len", true, length2},
      {'b', "bandwidth", true, rate2}, {'t', "time", true, time2}, {'i', "interval", true, interval2},
      {'P', "parallel", true, parallel}, {'R', "reverse", false, reverse}, {'d', "dualtest", false, bidir},
      {'r', "tradeoff", false, tradeoff}, {'w', "window", true, window2}, {'M', "mss", true, mss2},
      {'m', "print_mss", false, always}, {'4', nullptr, false, v4}, {'6', nullptr, false, v6},
      {'V', "ipv6_domain", false, v6}, {'B', "bind", true, bind}, {'Z', "tcp-congestion", true, congestion},
      {'S', "tos", true, tos},
      {'s', "server", false, nullptr, "server mode: run netserve there"}, {'D', "daemon", false, nullptr, "server mode"},
      {'1', "singleclient", false, nullptr, "server mode"}, {'U', "single_udp", false, nullptr, "server mode"},
      {'n', "num", true, nullptr, "a byte count instead of a duration"},
      {'e', "enhanced", false, always}, {'f', "format", true, format}, {'o', "output", true, nullptr, "output to a file"},
      {'x', "reportexclude", true, nullptr, "report selection"}, {'y', "reportstyle", true, nullptr, "CSV reports"},
      {'z', "realtime", false, nullptr, "real-time scheduling"}, {'C', "compatibility", false, nullptr, "compatibility mode"},
      {'F', "file_input", true, nullptr, "a file as the data"}, {'I', "stdin_input", false, nullptr, "stdin as the data"},
      {'H', "ssm-host", true, nullptr, "source-specific multicast"},
      {'L', "listenport", true, nullptr, "the port -d and -r listen on; netload's reverse data uses the test's port"},
      {'N', "nodelay", false, nullptr, "TCP_NODELAY"}, {'T', "ttl", true, nullptr, "the IP TTL"},
      {'W', "suggest_win_size", false, nullptr, "window suggestion"}, {'X', "peer-detect", false, nullptr, "peer detection"},
      {'A', "awdl", false, nullptr, "Apple wireless direct link"}, {'v', "version", false, nullptr, "iperf's version"},
      {'J', nullptr, false, nullptr, "!-J is iperf3's (JSON output): use netload --iperf3, or netload's --json"},
      {0, "full-duplex", false, nullptr, "both directions on one socket; -d, a socket each way, is netload's --bidir"},
      {0, "trip-times", false, nullptr, "one-way delays"}, {0, "histograms", false, nullptr, "latency histograms"},
      {0, "isochronous", false, nullptr, "isochronous frames"}, {0, "txstart-time", true, nullptr, "a start instant; netload's is --start-at"},
      {0, "bounceback", false, nullptr, "bounce-back latency"}, {0, "fq-rate", true, nullptr, "fair-queue pacing"}};
  // clang-format on
  return t;
}

[[noreturn]] void refuse(const option_spec& o, const char* tool, const std::string& spelled) {
  if (o.why[0] == '!') throw usage_error(fmt::format("{} has no option {}: {}", tool, spelled, o.why + 1));
  throw usage_error(fmt::format("{} option {} ({}) has no netload equivalent", tool, spelled, o.why));
}

[[noreturn]] void unknown(const std::vector<option_spec>& table, const char* tool, const std::string& spelled) {
  std::vector<std::string> names;
  for (const auto& s : table)
    if (s.long_name) names.push_back(fmt::format("--{}", s.long_name));
  const auto near = nb::cli::nearest(spelled, names);
  throw usage_error(
      fmt::format("{} option {} is not one netload translates ({}netload --{} --help lists those it does)", tool,
                  spelled, near ? fmt::format("did you mean {}? ", *near) : "", tool));
}

// getopt_long's val for a long name: long_base + its index in the table (a short option's val is its letter).
constexpr int long_base = 256;

// The table as getopt_long reads it. "+": the first operand ends the options (it is refused, never moved
// to the end); ":": a missing value is ':', apart from an unknown option's '?'.
struct getopt_tables {
  std::string shorts = "+:h";
  std::vector<::option> longs;
};

getopt_tables getopt_tables_of(const std::vector<option_spec>& table) {
  getopt_tables g;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const option_spec& s = table[i];
    const int has_arg = s.takes_value ? required_argument : no_argument;
    if (s.short_name) g.shorts += s.takes_value ? std::string{s.short_name, ':'} : std::string{s.short_name};
    if (s.long_name) g.longs.push_back({s.long_name, has_arg, nullptr, long_base + static_cast<int>(i)});
  }
  g.longs.push_back({"help", no_argument, nullptr, long_base + static_cast<int>(table.size())});
  g.longs.push_back({nullptr, 0, nullptr, 0});
  return g;
}

const option_spec* spec_of(const std::vector<option_spec>& table, int val) {
  if (val >= long_base) return val - long_base < static_cast<int>(table.size()) ? &table[val - long_base] : nullptr;
  const auto it = std::find_if(table.begin(), table.end(), [&](const option_spec& s) { return s.short_name == val; });
  return val != 0 && it != table.end() ? &*it : nullptr;
}

// What getopt_long returned: an option's val, '?' (unknown, or a value given to a flag) or ':' (no value),
// from the argument `element`. Long names are taken whole only: iperf's table has names ours lacks, so an
// abbreviation unique here may be another option, or ambiguous, there. Returns false for help.
bool take(const std::vector<option_spec>& table, const char* tool, int c, std::string_view element, request& r) {
  const bool failed = c == '?' || c == ':';
  const int val = failed ? optopt : c;
  const bool is_long = val == 0 || val >= long_base;
  const std::string spelled =
      is_long ? std::string(element.substr(0, element.find('='))) : fmt::format("-{}", static_cast<char>(val));
  const option_spec* o = spec_of(table, val);
  const bool help = spelled == "-h" || spelled == "--help";
  if (!help && (!o || (is_long && spelled != fmt::format("--{}", o->long_name)))) unknown(table, tool, spelled);
  if (!help && !o->apply) refuse(*o, tool, spelled);
  if (c == ':') throw usage_error(fmt::format("{} option {} needs a value", tool, spelled));
  if (c == '?') throw usage_error(fmt::format("{} option {} takes no value", tool, spelled));
  if (help) return false;
  o->apply(r, arg{tool, spelled, optarg ? optarg : ""});
  return true;
}

}  // namespace

const char* name(iperf_flavour f) { return f == iperf_flavour::iperf3 ? "iperf3" : "iperf2"; }

bool read_command_line(iperf_flavour f, const std::vector<std::string>& args, request& r) {
  const auto& table = f == iperf_flavour::iperf3 ? iperf3_options() : iperf2_options();
  const getopt_tables g = getopt_tables_of(table);
  const char* tool = name(f);
  std::vector<std::string> copy{tool};
  copy.insert(copy.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(copy.size());
  optind = 0;  // glibc: start over, its state from an earlier command line forgotten
  opterr = 0;
  for (;;) {
    const int at = std::max(optind, 1);  // the argument getopt_long reads from (a bundle stays at one)
    const int c = getopt_long(argc, argv.data(), g.shorts.c_str(), g.longs.data(), nullptr);
    if (c == -1) {
      // An operand, or "--": the server is -c's value, and nothing else is an operand.
      if (at < argc)
        throw usage_error(fmt::format("{}: unexpected argument '{}' (the server is given as -c HOST)", tool, copy[at]));
      return true;
    }
    if (!take(table, tool, c, copy[at], r)) {
      fmt::print("{}", help_text(f));
      return false;
    }
  }
}

}  // namespace nb::load::iperf
