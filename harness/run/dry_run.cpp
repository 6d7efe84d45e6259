#include "harness/run/dry_run.hpp"

#include "harness/run/host_check.hpp"

#include "core/units.hpp"
#include "harness/plan/expand.hpp"
#include "harness/run/launcher.hpp"
#include "core/process.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace harness {
namespace {

using lines = std::map<std::string, std::vector<std::string>>;  // host -> what it runs, in order
using needs = std::map<std::string, std::set<std::string>>;       // host -> programs it runs

std::string netperf_equivalent(const run_spec& r, const std::string& address, std::uint16_t port, bool probe) {
  const test_spec& t = *r.spec;
  if (probe)  // netperf paces no transactions: its demo mode is the nearest
    return fmt::format("netperf -H {} -p {} -t UDP_RR -l {:g} -D 1 -- -r {},{}  (unpaced: netperf cannot pace it)", address,
                       port, t.probe->idle + r.duration, t.probe->size, t.probe->size);
  if (nb::is_rr(r.kind)) {
    std::string cmd = fmt::format("netperf -H {} -p {} -t {} -l {:g} -- -r {},{}", address, port, nb::to_string(r.kind),
                                  r.duration, r.message_size, t.response_size);
    if (t.burst) cmd += fmt::format(" -b {}", t.burst);
    return cmd;
  }
  std::string cmd = fmt::format("netperf -H {} -p {} -t {} -l {:g} -- -m {}", address, port, nb::to_string(r.kind), r.duration,
                                r.message_size);
  if (t.mss) cmd += fmt::format(" -M {}", t.mss);
  if (!t.send_buffer.empty()) cmd += " -s " + t.send_buffer;
  if (!t.recv_buffer.empty()) cmd += " -S " + t.recv_buffer;
  if (!t.congestion.empty()) cmd += " -K " + t.congestion;
  return cmd;
}

// A bidirectional run's forward instance stands for iperf3 --bidir / iperf -d, both directions at once.
std::string iperf_equivalent(const run_spec& r, const std::string& address, std::uint16_t port, bool reverse, bool probe) {
  const test_spec& t = *r.spec;
  if (probe || nb::is_rr(r.kind)) return "iperf3 and iperf2 have no request/response test (ping or sockperf ping-pong come nearest)";
  const load_level& load = r.load;
  std::string rate = load.rate ? *load.rate : load.pps ? fmt::format("{:g}", *load.pps * r.message_size * 8) : "0";
  if (r.kind == nb::test_kind::udp_stream)  // 16 bytes is iperf3's smallest UDP payload
    return fmt::format("iperf3 -u -l {} -b {} -t {:g} -c {} -i 1 -p {}{}", std::max<std::uint32_t>(16, r.message_size),
                       rate, r.duration, address, port, r.bidirectional ? " --bidir" : reverse ? " -R" : "");
  // iperf's -b is per stream; netload's --rate is for all streams together.
  if (load.rate) rate = fmt::format("{:g}M", nb::parse_rate(*load.rate) / t.streams / 1e6);
  std::string cmd = fmt::format("iperf -c {} -p {} -t {:g} -b {} -P {}", address, port, r.duration, rate, t.streams);
  if (t.mss) cmd += fmt::format(" -M {}", t.mss);
  if (!t.congestion.empty()) cmd += " -Z " + t.congestion;
  if (r.bidirectional) cmd += " -d";
  return cmd;
}

void add_run(lines& out, needs& progs, const plan& p, const run_spec& r, const std::map<std::string, std::unique_ptr<launcher>>& ls) {
  for (const auto& s : r.servers) {
    const launcher& l = *ls.at(s.host);
    progs[s.host].insert("netserve");
    out[s.host].push_back(
        fmt::format("[{}] {}", r.id, nb::quote_argv(l.wrap(netserve_command(l.program("netserve"), l.target(), s.ports)))));
    std::string ports;
    for (auto port : s.ports) ports += fmt::format(" -p {}", port);
    out[s.host].push_back(fmt::format("    replaces: netserver{}   |   iperf3 -s -i 1 -p PORT (one per port)", ports));
  }
  for (const auto& i : r.instances) {
    const launcher& l = *ls.at(i.client);
    progs[i.client].insert("netload");
    const std::uint16_t port = r.servers[i.server_index].ports[i.port_slot];
    const std::string& address = p.hosts.at(i.server).address;
    auto argv = l.wrap_announcing_pid(netload_command(l.program("netload"), r, p.hosts.at(i.server), port,
                                                      p.hosts.at(i.client), i.reverse, i.probe));
    if (port == 0)  // any free port: the real one comes from netserve's ready line at run time
      for (std::size_t k = 0; k + 1 < argv.size(); ++k)
        if (argv[k] == "-p" && argv[k + 1] == "0") argv[k + 1] = "PORT_FROM_READY_LINE";
    out[i.client].push_back(fmt::format("[{}] {}", r.id, nb::quote_argv(argv)));
    if (r.bidirectional && i.reverse) {  // the iperf lines of its forward partner cover both directions
      out[i.client].push_back("    both ways at once: the reverse half of the iperf3 --bidir / iperf -d line above");
      continue;
    }
    out[i.client].push_back("    replaces: " + netperf_equivalent(r, address, port, i.probe) +
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
    add_run(per_host, progs, p, r, ls);
    if (const auto& s = r.spec->search)  // the trials' rates are found at run time
      for (const auto& i : r.instances)
        per_host[i.client].push_back(fmt::format(
            "    rate search: one unpaced trial (MRR), then up to {} trials of {:g} s with --pps RATE/{} and a "
            "{:g}-s final trial per loss target ({}%)",
            s->max_trials, s->trial, r.instances.size(), s->final_s, fmt::join(s->loss_pct, "%, ")));
  }
  std::string out = fmt::format("# dry run of plan '{}' ({}): {} run(s); each netload connects, prints 'armed' and waits; "
                                "once all of a run are armed, each gets T0 = that moment + {:g} s (lead) on its stdin\n",
                                p.name, p.source_path, runs.size(), p.lead);
  for (const auto& [name, cmds] : per_host) {
    const launcher& l = *ls.at(name);
    out += fmt::format("\n## host {} ({}, launcher {})\n", name, l.target().address, to_string(l.target().launcher));
    if (auto open = l.open_argv(); !open.empty()) out += "  connect: " + nb::quote_argv(open) + "\n";
    // The host check (harness/run/host_check.hpp): netserve's version where it serves, then netload's facts
    // and clock over one connection.
    if (progs[name].count("netserve")) out += "  check:   " + nb::quote_argv(l.wrap({l.program("netserve"), "--version"})) + "\n";
    std::vector<std::string> info{l.program("netload"), "--host-info"};
    for (const auto& peer : peers[name]) info.insert(info.end(), {"--mtu-to", peer});
    out += "  check:   " + nb::quote_argv(l.wrap_announcing_pid(info)) + "   (then 8 clock exchanges on its stdin)\n";
    for (const auto& c : cmds) out += "  " + c + "\n";
    if (auto close = l.close_argv(); !close.empty()) out += "  close:   " + nb::quote_argv(close) + "\n";
  }
  return out;
}

}  // namespace harness
