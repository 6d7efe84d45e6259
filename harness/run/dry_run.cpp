#include "harness/run/dry_run.hpp"

#include "harness/records/host_check.hpp"

#include "core/base/units.hpp"
#include "harness/launch/launcher.hpp"
#include "harness/plan/expand.hpp"
#include "harness/process/process.hpp"
#include "harness/run/search_trials.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

namespace harness {
namespace {

using lines = std::map<std::string, std::vector<std::string>>;
using needs = std::map<std::string, std::set<std::string>>;

// What netperf cannot say: one stream per process, no pacing, no MSS.
std::string netperf_notes(const run_spec& r) {
  const test_spec& t = *r.spec;
  std::vector<std::string> notes;
  if (t.streams > 1)
    notes.push_back(
        fmt::format("--streams {}: {} such netperf processes at once, one stream each", t.streams, t.streams));
  if (r.load.rate)
    notes.push_back(fmt::format("--rate {}: netperf cannot pace it{}", *r.load.rate,
                                r.kind == nb::test_kind::tcp_stream ? " (for TCP a ceiling, as iperf's -b)" : ""));
  if (r.load.pps) notes.push_back(fmt::format("--pps {:g}: netperf cannot pace it", *r.load.pps));
  if (t.mss) notes.push_back(fmt::format("--mss {}: netperf cannot set the MSS", t.mss));
  return notes.empty() ? "" : fmt::format("   ({})", fmt::join(notes, "; "));
}

std::string netperf_equivalent(const run_spec& r, const std::string& address, std::uint16_t port, bool probe) {
  const test_spec& t = *r.spec;
  if (probe)  // netperf paces no transactions: demo mode is nearest
    return fmt::format("netperf -H {} -p {} -t UDP_RR -l {:g} -D 1 -- -r {},{}  (unpaced: netperf cannot pace it)",
                       address, port, t.probe->idle + r.duration, t.probe->size, t.probe->size);
  if (nb::is_rr(r.kind)) {
    std::string cmd = fmt::format("netperf -H {} -p {} -t {} -l {:g} -- -r {},{}", address, port, nb::to_string(r.kind),
                                  r.duration, r.message_size, t.response_size);
    if (t.burst) cmd += fmt::format(" -b {}", t.burst);
    return cmd + netperf_notes(r);
  }
  std::string cmd = fmt::format("netperf -H {} -p {} -t {} -l {:g} -- -m {}", address, port, nb::to_string(r.kind),
                                r.duration, r.message_size);
  if (!t.send_buffer.empty()) cmd += " -s " + t.send_buffer;
  if (!t.recv_buffer.empty()) cmd += " -S " + t.recv_buffer;
  if (!t.recv_size.empty()) cmd += " -M " + t.recv_size;  // recv() size
  if (!t.congestion.empty()) cmd += " -K " + t.congestion;
  return cmd + netperf_notes(r);
}

// As iperf2 reads -b back exactly: upper-case K M G are powers of 1024, lower-case of 1000 (its man page).
std::string iperf2_rate(double bps) {
  if (bps != std::floor(bps) || bps >= 1e18) return fmt::format("{:.0f}", bps);
  const auto n = static_cast<std::uint64_t>(bps);
  const std::pair<std::uint64_t, char> units[] = {{1ull << 30, 'G'}, {1'000'000'000, 'g'}, {1ull << 20, 'M'},
                                                  {1'000'000, 'm'},  {1ull << 10, 'K'},    {1'000, 'k'}};
  for (const auto& [size, letter] : units)
    if (n >= size && n % size == 0) return fmt::format("{}{}", n / size, letter);
  return fmt::format("{}", n);
}

// iperf3's -b suffixes are powers of 1000 in either case (src/units.c).
std::string iperf3_rate(double bps) {
  if (bps != std::floor(bps) || bps >= 1e18) return fmt::format("{:.0f}", bps);
  const auto n = static_cast<std::uint64_t>(bps);
  const std::pair<std::uint64_t, char> units[] = {{1'000'000'000, 'G'}, {1'000'000, 'M'}, {1'000, 'K'}};
  for (const auto& [size, letter] : units)
    if (n >= size && n % size == 0) return fmt::format("{}{}", n / size, letter);
  return fmt::format("{}", n);
}

// The forward instance stands for iperf3 --bidir / iperf -d. iperf's -b is per stream, netload's
// --rate for all streams; for TCP both are ceilings.
std::string iperf_equivalent(const run_spec& r, const std::string& address, std::uint16_t port, bool reverse,
                             bool probe) {
  const test_spec& t = *r.spec;
  if (probe || nb::is_rr(r.kind))
    return "iperf3 and iperf2 have no request/response test (ping or sockperf ping-pong come nearest)";
  const load_level& load = r.load;
  const double total = load.rate ? nb::parse_rate(*load.rate) : load.pps ? *load.pps * r.message_size * 8 : 0;
  const double per_stream = total / t.streams;
  const std::string streams = t.streams > 1 ? fmt::format(" -P {}", t.streams) : "";
  if (r.kind == nb::test_kind::udp_stream)  // iperf3's smallest UDP payload is 16 bytes; -b 0 is unlimited
    return fmt::format("iperf3 -u -l {} -b {} -t {:g} -c {} -i 1 -p {}{}{}",
                       std::max<std::uint32_t>(16, r.message_size), iperf3_rate(per_stream), r.duration, address, port,
                       streams,
                       r.bidirectional ? " --bidir"
                       : reverse       ? " -R"
                                       : "");
  std::string cmd = fmt::format("iperf -c {} -p {} -t {:g}", address, port, r.duration);
  if (total > 0) cmd += " -b " + iperf2_rate(per_stream);
  cmd += streams;
  if (t.mss) cmd += fmt::format(" -M {}", t.mss);
  if (!t.congestion.empty()) cmd += " -Z " + t.congestion;
  if (r.bidirectional) cmd += " -d";
  else if (reverse) cmd += " -R";
  return cmd;
}

void add_run(lines& out, needs& progs, const plan& p, const run_spec& r,
             const std::map<std::string, std::unique_ptr<launcher>>& ls) {
  for (const auto& s : r.servers) {
    const launcher& l = *ls.at(s.host);
    if (const host& h = p.hosts.at(s.host); h.stock_peer()) {
      out[s.host].push_back(fmt::format(
          "[{}] no netserve started (peer = \"{}\"): a stock {} must be running here on port{} {}", r.id, h.peer,
          h.peer == "iperf3" ? "iperf3 -s" : "netserver", s.ports.size() == 1 ? "" : "s", fmt::join(s.ports, ", ")));
      continue;
    }
    progs[s.host].insert("netserve");
    out[s.host].push_back(fmt::format(
        "[{}] {}", r.id, nb::quote_argv(l.wrap(netserve_command(l.program("netserve"), l.target(), s.ports)))));
    std::string ports;
    for (auto port : s.ports) ports += fmt::format(" -p {}", port);
    out[s.host].push_back(fmt::format("    replaces: netserver{}   |   iperf3 -s -i 1 -p PORT (one per port)", ports));
  }
  for (const auto& i : r.instances) {
    const launcher& l = *ls.at(i.client);
    progs[i.client].insert("netload");
    const std::uint16_t port = r.servers[i.server_index].ports[i.port_slot];
    const std::string& address = p.hosts.at(i.server).address;
    auto argv = l.wrap_announcing_pid(
        netload_command(l.program("netload"), r, p.hosts.at(i.server), port, p.hosts.at(i.client), i.reverse, i.probe));
    if (port == 0)
      for (std::size_t k = 0; k + 1 < argv.size(); ++k)
        if (argv[k] == "-p" && argv[k + 1] == "0") argv[k + 1] = "PORT_FROM_READY_LINE";
    out[i.client].push_back(fmt::format("[{}] {}", r.id, nb::quote_argv(argv)));
    if (r.bidirectional && i.reverse) {  // its forward partner's lines cover both
      out[i.client].push_back("    both ways at once: the reverse half of the iperf3 --bidir / iperf -d line above");
      continue;
    }
    out[i.client].push_back(
        "    replaces: " + netperf_equivalent(r, address, port, i.probe) +
        (r.bidirectional && !i.probe ? "   (and the reverse instance below, at the same instant)" : ""));
    out[i.client].push_back("    replaces: " + iperf_equivalent(r, address, port, i.reverse, i.probe));
  }
}

}  // namespace

std::string dry_run(const plan& p, const std::string& local_bin_dir) {
  std::map<std::string, std::unique_ptr<launcher>> ls;
  for (const auto& [name, h] : p.hosts) ls.emplace(name, make_launcher(h, local_bin_dir, "/tmp/harness-ssh-XXXXXX"));
  const auto runs = expand(p);
  lines per_host;
  needs progs;
  auto peers = peers_per_host(p, runs);
  for (const auto& r : runs) {
    const auto& s = r.spec->search;
    // As the first trial runs it (unpaced, the trial's length); trial rates are found at run time.
    double first = 0;
    if (s)
      for (const auto& g : s->goals) first = std::max(first, g.initial_trial_duration);
    add_run(per_host, progs, p, s ? trial_of(r, r.id, 0, first, nullptr) : r, ls);
    if (!s) continue;
    std::vector<std::string> goals;
    for (const auto& g : s->goals)
      goals.push_back(fmt::format(
          "{} (loss_ratio {:g}, exceed_ratio {:g}, trials {:g} to {:g} s, duration_sum {:g} s, width {:g})", g.name,
          g.loss_ratio, g.exceed_ratio, g.initial_trial_duration, g.final_trial_duration, g.duration_sum, g.width));
    const std::size_t load = r.instances.size() - (r.probe() ? 1 : 0);
    for (const auto& i : r.instances)
      if (!i.probe)
        per_host[i.client].push_back(fmt::format(
            "    rate search (MLRsearch, RFC 9971): this unpaced trial (MRR, -l {:g}), then up to {} trials with --pps LOAD/{} "
            "({}) for the goals {}{}",
            first, s->max_trials, load, load_conversion(load), fmt::join(goals, ", "),
            r.probe() ? "; then the latency probe under 0, 10, 50 and 90 % of the PDR's conditional throughput" : ""));
  }
  std::string out = fmt::format(
      "# dry run of plan '{}' ({}): {} run(s); each netload connects, prints 'armed' and waits; "
      "once all of a run are armed, each gets T0 = that moment + {:g} s (lead) on its stdin\n",
      p.name, p.source_path, runs.size(), p.lead);
  for (const auto& [name, cmds] : per_host) {
    const launcher& l = *ls.at(name);
    out += fmt::format("\n## host {} ({}, launcher {})\n", name, l.target().address, to_string(l.target().launcher));
    if (auto open = l.open_argv(); !open.empty()) out += "  connect: " + nb::quote_argv(open) + "\n";
    // The host check: netserve's version, then netload's facts and clock.
    if (progs[name].count("netserve"))
      out += "  check:   " + nb::quote_argv(l.wrap({l.program("netserve"), "--version"})) + "\n";
    std::vector<std::string> info{l.program("netload"), "--host-info"};
    for (const auto& peer : peers[name]) info.insert(info.end(), {"--mtu-to", peer});
    out += "  check:   " + nb::quote_argv(l.wrap_announcing_pid(info)) + "   (then 8 clock exchanges on its stdin)\n";
    for (const auto& c : cmds) out += "  " + c + "\n";
    if (auto close = l.close_argv(); !close.empty()) out += "  close:   " + nb::quote_argv(close) + "\n";
  }
  return out;
}

}  // namespace harness
