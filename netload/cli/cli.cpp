#include "netload/cli/cli.hpp"
#include "netload/cli/cli_finish.hpp"

#include "core/base/cli_help.hpp"
#include "core/base/limits.hpp"
#include "core/base/units.hpp"
#include "core/base/version.hpp"
#include "core/base/whole_number.hpp"
#include "core/sys/socket.hpp"
#include "netload/cli/search_cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/socket.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace nb::load {
namespace {

using detail::finish;
using detail::raw_options;

// With what they do, so the refusal says more than "unknown".
const std::map<std::string, std::string> unsupported_global = {{"-a", "send/recv buffer alignment"},
                                                               {"-A", "remote buffer alignment"},
                                                               {"-b", "burst size"},
                                                               {"-B", "result banner text"},
                                                               {"-d", "debug output"},
                                                               {"-D", "demo mode (use --interval)"},
                                                               {"-F", "fill file"},
                                                               {"-i", "confidence iterations"},
                                                               {"-I", "confidence interval"},
                                                               {"-j", "latency statistics"},
                                                               {"-n", "CPU count"},
                                                               {"-N", "no control connection"},
                                                               {"-o", "remote offset"},
                                                               {"-O", "output selectors"},
                                                               {"-P", "banner on/off"},
                                                               {"-v", "verbosity"},
                                                               {"-w", "send wait time (use --pps)"},
                                                               {"-W", "send/recv width"},
                                                               {"-y", "SO_PRIORITY"},
                                                               {"-Y", "IP_TOS (use --dscp)"}};
const std::map<std::string, std::string> unsupported_test = {
    {"-P", "data port: netload sends data to the control port itself"},
    {"-D", "TCP_NODELAY"},
    {"-C", "TCP_CORK"},
    {"-4", "address family (give -4 before --)"},
    {"-6", "address family (give -6 before --)"},
    {"-H", "data host"},
    {"-L", "data local address"}};

void reject_unsupported(const std::vector<std::string>& args, const std::map<std::string, std::string>& table,
                        const char* where) {
  for (const auto& a : args) {
    auto it = table.find(a.substr(0, 2));
    if (a.size() >= 2 && a[0] == '-' && a[1] != '-' && it != table.end())
      throw usage_error(
          fmt::format("netperf {}option {} ({}) is not supported by netload", where, it->first, it->second));
  }
}

// Validators say what is wrong in words.
void add_connection(CLI::App& app, client_options& o, raw_options& raw) {
  using namespace nb::cli;
  const std::string conn = "Server and connection";
  option(app, "-H,--host", o.host, "Server host name or address (default 127.0.0.1)", "HOST", conn);
  option(app, "-p,--port", o.port, "Server port, control and data (default 12865)", "PORT", conn)
      ->check(whole_in("-p", 1, 65535));
  option(app, "-L,--local", o.local_address, "Local address to send from (numeric; control and data)", "ADDR", conn);
  app.add_flag_callback(
         "-4", [&] { o.family = AF_INET; }, "IPv4 only")
      ->group(conn);
  app.add_flag_callback(
         "-6", [&] { o.family = AF_INET6; }, "IPv6 only")
      ->group(conn);
  option(app, "--peer", raw.peer,
         "The server: netserve (default), or a stock iperf3 -s (port 5201 unless -p) or netperf netserver 2.7 "
         "(UDP_STREAM, TCP_STREAM); a stock server's own counts are the receiver's",
         "SERVER", conn);
  option(app, "--connect-timeout", o.connect_timeout_s,
         "Seconds to wait for the server: the connection and its handshake (--peer iperf3: its setup too; default 5)",
         "SECONDS", conn)
      ->check(positive("--connect-timeout", "seconds"));
  option(app, "--psk-file", o.psk_file, "Key file (first line) for a netserve started with --psk-file", "FILE", conn);
}

void add_test_shape(CLI::App& app, client_options& o, raw_options& raw) {
  using namespace nb::cli;
  const std::string test = "Test";
  option(app, "-t,--test", raw.test, "UDP_STREAM, TCP_STREAM, UDP_RR or TCP_RR (default TCP_STREAM)", "TEST", test);
  option(app, "-l,--length", o.duration_s, "Test duration, seconds (default 10)", "SECONDS", test)
      ->check(positive("-l", "seconds"));
  option(app, "--streams", o.streams, "Parallel streams, one thread each (default 1)", "N", test)
      ->check(whole_in("--streams", 1, max_streams_per_test));
  option(app, "--omit", o.omit_s, "Run this many seconds before -l's and leave them out of the figures (iperf3 -O)",
         "SECONDS", test)
      ->check(non_negative("--omit", "seconds"));
  app.add_flag("--reverse", o.reverse, "The server sends, netload receives")->group(test);
  app.add_flag("--bidir", o.bidir,
               "Both directions at once (iperf3 --bidir): a second test in reverse on its own connection, one start "
               "instant, each direction's counts and a sum; --rate / --pps apply to each direction")
      ->group(test);
  option(app, "-T", raw.cpus, "CPU affinity: local,remote (netperf syntax: N, L,R, L, or ,R)", "CPUS", test);
  option(app, "--burst", raw.burst, "RR: transactions in flight beyond the first (netperf's -- -b)", "N", test)
      ->check(whole_in("--burst", 0, max_rr_burst));
}

void add_global(CLI::App& app, client_options& o, raw_options& raw) {
  using namespace nb::cli;
  const std::string pace = "Pacing", out = "Output", start = "Start instant", wire = "Data sockets";
  add_connection(app, o, raw);
  add_test_shape(app, o, raw);
  option(app, "--rate", raw.rate, "Target payload bit rate, all streams (k/M/G suffixes)", "BITS", pace);
  option(app, "--pps", o.pps, "Target packets (TCP: messages; RR: transactions) per second, all streams", "N", pace)
      ->check(non_negative("--pps", "packets per second"));
  option(app, "-f", raw.units,
         "Units of the printed rates: k m g = 10^3 10^6 10^9 bit/s, K M G = 2^10 2^20 2^30 byte/s (default m)", "UNITS",
         out);
  app.add_flag("-c", o.local_cpu_util, "Print the local host's CPU utilisation and service demand")->group(out);
  app.add_flag("-C", o.remote_cpu_util, "Print the remote host's CPU utilisation and service demand")->group(out);
  option(app, "--interval", o.interval_s, "Report every so many seconds (0 = off)", "SECONDS", out)
      ->check(non_negative("--interval", "seconds"));
  app.add_flag("--json", o.json, "Print one JSON result object")->group(out);
  app.add_flag("--json-stream", o.json_stream, "Print JSON lines: intervals, then the result")->group(out);
  option(app, "--start-at", o.start_at, "Start sending at this wall-clock instant (epoch seconds, in the future)",
         "EPOCH", start);
  app.add_flag("--start-on-stdin", o.start_on_stdin,
               "Connect, say 'armed', then read the start instant (epoch seconds) from standard input")
      ->group(start);
  option(app, "--dscp", o.dscp, "DSCP value for data packets", "N", wire)->check(whole_in("--dscp", 0, max_dscp));
  app.add_flag("--gso", raw.gso,
               "UDP: send GSO buffers even where the route's device passes them whole (by default netload sends "
               "datagram by datagram there)")
      ->group(wire);
  app.add_flag("--no-gso", raw.no_gso, "UDP: send datagram by datagram (sendmmsg), never GSO buffers")->group(wire);
  app.add_flag("!--no-gro", o.gro, "Receive without UDP GRO (reverse mode)")->group(wire);
  option(app, "--batch", o.batch, "Datagrams per system call at most", "N", wire)
      ->check(whole_in("--batch", 1, max_batch));
  const std::string check = "Host check (what `harness check` runs on each host)";
  app.add_flag("--host-info", o.host_info,
               "Run no test: print this host's facts (JSON line), then answer each line on stdin with the wall clock")
      ->group(check);
  option(app, "--mtu-to", o.mtu_peers, "With --host-info: give the path MTU to this peer (repeatable)", "ADDRESS",
         check)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_test(CLI::App& app, raw_options& raw, client_options& o) {
  using namespace nb::cli;
  const std::string group = "Test-specific options (after --)";
  option(app, "-m", raw.message, "Message (datagram payload / send) size, bytes (UDP 1472, TCP 1M)", "SIZE", group);
  option(app, "-s", raw.local_buf, "Local socket buffer, bytes (K/M suffixes)", "BYTES", group);
  option(app, "-S", raw.remote_buf, "Remote socket buffer, bytes (K/M suffixes)", "BYTES", group);
  option(app, "-M", raw.remote_recv_size,
         "TCP: the receiver's bytes per recv(), as netperf's remote receive size (--recv-size)", "BYTES", group);
  option(app, "--mss", o.mss, "TCP maximum segment size (iperf's -M)", "BYTES", group)
      ->check(whole_in("--mss", min_mss, max_mss));
  option(app, "-K", o.congestion, "TCP congestion control, both ends (cubic, bbr, reno...; default: each host's)",
         "ALGO", group);
  option(app, "--recv-size", raw.recv_size, "TCP: the receiver's bytes per recv() (default 64K under bbr, else 256K)",
         "BYTES", group);
  app.add_flag("--zerocopy", o.zerocopy, "TCP: send with MSG_ZEROCOPY (the result says what the kernel copied)")
      ->group(group);
  app.add_flag("--send-copy", o.send_copy, "TCP: send() from a buffer, as iperf3 and iperf2 do, instead of sendfile()")
      ->group(group);
  option(app, "--recv-mode", raw.recv_mode,
         "TCP: how the receiver reads: copy (as iperf3 and iperf2 do), discard (the kernel counts and drops the "
         "bytes, MSG_TRUNC) or auto (default: copy for one stream to this host, where that splits TCP's work "
         "between the two CPUs; discard otherwise)",
         "auto|copy|discard", group);
  app.add_flag("--recv-copy", raw.recv_copy, "TCP: --recv-mode copy")->group(group);
  app.add_flag("--recv-discard", raw.recv_discard, "TCP: --recv-mode discard")->group(group);
  option(app, "-r", raw.rr_sizes, "RR: request and response sizes, bytes (default 1,1)", "REQ,RESP", group);
  option(app, "-b", raw.test_burst, "RR: transactions in flight beyond the first (default 0)", "N", group)
      ->check(whole_in("-b", 0, max_rr_burst));
  option(app, "-R", raw.routing, "Allow routing: 1 only (SO_DONTROUTE is never set)", "1", group)
      ->check(whole_in("-R", 0, 1));
}

std::string refused_list(const std::map<std::string, std::string>& table) {
  std::string s;
  for (const auto& [flag, what] : table) s += fmt::format("{}{} {}", s.empty() ? "" : "; ", flag, what);
  return s;
}

std::string wrap(const std::string& text, std::size_t width, const std::string& indent) {
  std::string out, line;
  std::size_t from = 0;
  while (from < text.size()) {
    auto to = text.find(' ', from);
    if (to == std::string::npos) to = text.size();
    std::string word = text.substr(from, to - from);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    from = to + 1;
  }
  return out + indent + line + "\n";
}

std::string footer() {
  return "Examples:\n"
         "  netload -H HOST -t UDP_STREAM -l 30 -- -m 1472          UDP, as fast as it goes, 30 s\n"
         "  netload -H HOST -t UDP_STREAM --pps 100000 -- -m 64     UDP paced at 100 000 packets/s\n"
         "  netload -H HOST -t TCP_STREAM --streams 4 --json        four TCP streams, a JSON result\n"
         "  netload -H HOST -t UDP_STREAM --reverse --rate 1G       the server sends at 1 Gbit/s\n"
         "  netload -H HOST -t TCP_STREAM -c -C -- -s 1M -S 1M      CPU use and service demand, 1 MiB buffers\n"
         "  netload -H HOST -t UDP_RR -- -r 64,64                   round trips: transactions/s, latency percentiles\n"
         "  netload -H HOST -t UDP_RR --pps 100 -l 60               a latency probe: 100 transactions/s for a minute\n"
         "  netload -H HOST -t UDP_STREAM --bidir --pps 10000       both ways at once, 10 000 packets/s each\n"
         "  netload -H HOST -t UDP_STREAM --search pdr -- -m 64     the highest load losing at most 0.5 % (RFC 9971)\n"
         "  netload --iperf3 -u -b 100m -c HOST                     an iperf client command line, translated\n"
         "                                                          (--iperf2 ARGS too; --iperf3 -h lists the options)\n"
         "\nnetperf options netload refuses (exit status 2, naming the option):\n" +
         wrap(refused_list(unsupported_global), 100, "  ") + "after --:\n" +
         wrap(refused_list(unsupported_test), 100, "  ") +
         "\nExit status: 0 ran and reconciles; 1 failed (one line on stderr says why); 2 bad command line;\n"
         "3 ran but does not reconcile; 4 ran and reconciles, but the paced target (--pps, --rate) was\n"
         "missed by more than 1 % (TCP: the rate is a ceiling, as iperf's -b: 4 only above it); 130 / 143\n"
         "stopped by SIGINT / SIGTERM: the figures measured until the stop are printed, marked INTERRUPTED\n"
         "(nothing is sent after it). With --bidir, the worse of the two directions'. With --search: 0 the\n"
         "goals ended the search (regular or not: the results say), 1 it failed or a cap ended it first.\n"
         "\nOld kernels: without UDP GSO (Linux 4.18) netload sends with sendmmsg, without UDP GRO (5.0) it\n"
         "receives with recvmmsg, without SO_MEMINFO (4.12) the receiver's drops are unknown; a line on\n"
         "stderr and the result's batching say which. NETBENCH_DISABLE=gso,gro,meminfo (any of them)\n"
         "takes those paths on any kernel, for tests.";
}

// An option of the other list says on which side of "--" it goes; else the nearest is named.
std::string refusal(const CLI::App& here, const CLI::App& other, bool in_test, const CLI::Error& e) {
  const auto unknown = nb::cli::find_unknown_option(here);
  if (!unknown) return nb::cli::describe(here, e);
  // "-m64"
  const std::string name = unknown->name.starts_with("--") ? unknown->name : unknown->name.substr(0, 2);
  if (other.get_option_no_throw(name))
    return in_test ? fmt::format("'{}' is not a test option: give it before --", name)
                   : fmt::format("'{}' is a test option: give it after -- (netload [OPTIONS] -- {} ...)", name, name);
  return nb::cli::describe(*unknown,
                           in_test ? std::vector<std::string>{} : std::vector<std::string>{"--iperf3", "--iperf2"});
}

}  // namespace

double client_options::target_pps() const {
  if (pps > 0) return pps;
  if (rate_bps > 0) return rate_bps / (8.0 * message_size);
  return 0;
}

std::optional<client_options> parse_command_line(const std::vector<std::string>& args) {
  auto split = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> global(args.begin(), split), test;
  if (split != args.end()) test.assign(split + 1, args.end());
  reject_unsupported(global, unsupported_global, "");
  reject_unsupported(test, unsupported_test, "test-specific ");

  client_options o;
  raw_options raw;
  o.argv = args;
  CLI::App app{"netload: netperf-style UDP_STREAM / TCP_STREAM load generator"};
  // The last value, as netperf's getopt loop takes it.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_global(app, o, raw);
  add_search_options(app, o.search);
  nb::cli::set_help(app, "netload", "netload [OPTIONS] [-- TEST-OPTIONS]");
  app.set_version_flag("-V,--version", version, "Print the version and exit")->group("Other");
  CLI::App test_app;
  test_app.formatter(std::make_shared<nb::cli::help_formatter>("", false));
  test_app.set_help_flag();
  test_app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_test(test_app, raw, o);
  test_app.footer(footer());  // after both option lists
  bool in_test = false;       // which list CLI11 was reading when it refused
  try {
    std::vector<std::string> rev(global.rbegin(), global.rend());
    app.parse(rev);
    in_test = true;
    std::vector<std::string> trev(test.rbegin(), test.rend());
    test_app.parse(trev);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}{}", app.help(), test_app.help());
    return std::nullopt;
  } catch (const CLI::CallForVersion&) {
    fmt::print("netload {}\n", version);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw usage_error(in_test ? refusal(test_app, app, true, e) : refusal(app, test_app, false, e));
  }
  finish(o, raw);
  finish_search(o, app);
  if (o.peer == peer_kind::iperf3 && app.get_option("--port")->count() == 0) o.port = 5201;  // iperf3's
  return o;
}

}  // namespace nb::load
