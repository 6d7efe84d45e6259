// Building and removing the lab with ip, tc and nft. up() only creates what is missing and re-applies
// every setting with replace semantics, so it is idempotent; down() deletes the namespaces, which takes
// every veth, the bridge, the qdiscs and the nft tables with them (nothing of the lab lives outside them).
#include "harness/lab/lab.hpp"
#include "harness/lab/lab_exec.hpp"
#include "harness/lab/lab_names.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <set>
#include <sstream>
#include <thread>

namespace lab {

std::set<std::string> existing_netns();
void require_root();

namespace {

bool link_exists(const std::string& ns, const std::string& dev) {
  return try_run({"ip", "-n", ns, "link", "show", "dev", dev}).exit_code == 0;
}

std::string cidr(std::uint32_t a, int prefix) { return fmt::format("{}/{}", format_ipv4(a), prefix); }

// Probed once per `up`, in the circuit namespace, so a missing kernel feature is named plainly instead
// of surfacing as an obscure failure halfway through.
void probe_features(const lab_spec& s) {
  const std::string& c = s.circuit_netns;
  if (s.circuit.rate_bps) {
    auto r = try_run({"tc", "-n", c, "qdisc", "replace", "dev", "lo", "root", "tbf", "rate", "1mbit", "burst", "32kbit",
                      "latency", "50ms"});
    if (r.exit_code != 0)
      throw lab_error(fmt::format("this kernel has no tc tbf qdisc (sch_tbf), needed for the circuit's bit rate: {}",
                                  r.stderr_text));
    must_run({"tc", "-n", c, "qdisc", "del", "dev", "lo", "root"});
  }
  const std::string probe =
      "table inet nb_probe {\n chain f {\n  type filter hook forward priority 0; policy accept;\n"
      "  limit rate over 10/second drop\n  counter\n }\n}\ndelete table inet nb_probe\n";
  auto r = try_run({"ip", "netns", "exec", c, "nft", "-f", "-"}, probe);
  if (r.exit_code != 0)
    throw lab_error(
        fmt::format("nftables (nf_tables with limit and counter) is unavailable, needed for the circuit's packet rate "
                    "and the hosts' counters: {}",
                    r.stderr_text));
}

// IPv6 off: the lab is IPv4 (198.18.0.0/15), and router solicitations or MLD reports would only add
// packets to the counters the tests compare.
void ensure_netns(const std::string& ns, const std::set<std::string>& have) {
  if (!have.count(ns)) must_run({"ip", "netns", "add", ns});
  must_run({"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
            "net.ipv6.conf.default.disable_ipv6=1"});
  must_run({"ip", "-n", ns, "link", "set", "lo", "up"});
}

// A veth pair from the circuit namespace into a host namespace, made in place: neither end ever
// appears in the host's own namespace. gso_max_segs 1 makes the kernel cut UDP GSO / TSO batches into
// wire-sized packets before the veth, as a real NIC puts them on the wire: otherwise one 64 KB super-
// packet would cross the circuit as "one packet" past the packet-rate limit and the nft counters.
void ensure_veth(const lab_spec& s, const std::string& circuit_end, const lab_host& h, int mtu) {
  const std::string& c = s.circuit_netns;
  if (!link_exists(c, circuit_end))
    must_run({"ip", "-n", c, "link", "add", circuit_end, "type", "veth", "peer", "name", host_if(s), "netns", h.netns});
  for (const auto& [ns, dev] : {std::pair{c, circuit_end}, std::pair{h.netns, host_if(s)}})
    must_run({"ip", "-n", ns, "link", "set", dev, "mtu", std::to_string(mtu), "gso_max_segs", "1", "up"});
}

void address_host(const lab_spec& s, const lab_host& h, const ipv4_net& side) {
  must_run({"ip", "-n", h.netns, "addr", "replace", cidr(h.address, side.prefix), "dev", host_if(s)});
  must_run({"ip", "-n", h.netns, "route", "replace", "default", "via", format_ipv4(side.address), "dev", host_if(s)});
}

// Bit rate: tbf on both of the circuit's egress interfaces (to the device, and into the VPC bridge),
// so each direction is shaped once. The bucket holds 4 ms at the rate (at least 4 frames), the queue 20 ms
// (at least 2 frames); what overflows is dropped and counted by tc. The queue is given as `limit` bytes:
// tbf's `latency 20ms` sizes it rate x 20 ms + the bucket (tc-tbf(8)), and under load, with the bucket
// empty, a packet then waited 25.8 ms at 50 Mbit/s, not the 20 ms the lab says.
void apply_tbf(const lab_spec& s) {
  const std::string& c = s.circuit_netns;
  for (const std::string& dev : {onprem_if(s), bridge_if(s)}) {
    if (!s.circuit.rate_bps) {
      try_run({"tc", "-n", c, "qdisc", "del", "dev", dev, "root"});  // absent already: fine
      continue;
    }
    const double rate = *s.circuit.rate_bps;
    const auto burst = std::max<std::uint64_t>(static_cast<std::uint64_t>(rate / 8 * 0.004), 4 * 9014);
    const auto queue = std::max<std::uint64_t>(static_cast<std::uint64_t>(rate / 8 * 0.020), 2 * 9014);
    must_run({"tc", "-n", c, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", fmt::format("{:.0f}bit", rate),
              "burst", std::to_string(burst), "limit", std::to_string(queue)});
  }
}

// Packet rate: one limit per direction in the forward hook (what the circuit router forwards); packets
// over the limit are dropped and counted, the rest counted too, so a report can say where the sender's
// surplus went. The bucket holds 10 ms of packets: senders write in sendmmsg batches, and nft's
// default of 5 would drop parts of batches even below the rate. ICMP the router itself sends (frag-needed) is output,
// not forward: never limited.
std::string circuit_ruleset(const lab_spec& s) {
  std::ostringstream o;
  const std::string t = nft_table(s);
  o << "table inet " << t << "\ndelete table inet " << t << "\ntable inet " << t << " {\n";
  for (const char* c : {"to_vpc_forwarded", "to_vpc_dropped", "to_onprem_forwarded", "to_onprem_dropped"})
    o << " counter " << c << " {}\n";
  o << " chain forward {\n  type filter hook forward priority 0; policy accept;\n";
  const std::pair<std::string, const char*> dirs[] = {{onprem_if(s), "to_vpc"}, {bridge_if(s), "to_onprem"}};
  for (const auto& [dev, dir] : dirs) {
    if (s.circuit.pps)
      o << fmt::format("  iifname \"{}\" limit rate over {}/second burst {} packets counter name \"{}_dropped\" drop\n",
                       dev, *s.circuit.pps, std::max<std::uint64_t>(5, *s.circuit.pps / 100), dir);
    o << fmt::format("  iifname \"{}\" counter name \"{}_forwarded\"\n", dev, dir);
  }
  o << " }\n}\n";
  return o.str();
}

// In each host: the kernel's own count of UDP datagrams delivered to it, to check netserve's count.
std::string host_ruleset(const lab_spec& s) {
  const std::string t = nft_table(s);
  return fmt::format(
      "table inet {0}\ndelete table inet {0}\ntable inet {0} {{\n counter udp_delivered {{}}\n"
      " chain input {{\n  type filter hook input priority 0; policy accept;\n"
      "  meta l4proto udp counter name \"udp_delivered\"\n }}\n}}\n",
      t);
}

void nft_load(const std::string& ns, const std::string& ruleset) {
  must_run({"ip", "netns", "exec", ns, "nft", "-f", "-"}, ruleset);
}

// Processes left in a namespace (a netserve from a failed run) keep it alive after its name is gone;
// down ends them so that nothing of the lab survives.
void end_processes(const std::string& ns) {
  for (int sig : {SIGTERM, SIGKILL}) {
    std::istringstream pids(try_run({"ip", "netns", "pids", ns}).stdout_text);
    bool any = false;
    for (long pid; pids >> pid;) any = ::kill(static_cast<pid_t>(pid), sig) == 0 || any;
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

namespace {

void build(const lab_spec& s) {
  const auto have = existing_netns();
  ensure_netns(s.circuit_netns, have);
  probe_features(s);
  ensure_netns(s.device.netns, have);
  for (const auto& h : s.instances) ensure_netns(h.netns, have);
  const std::string& c = s.circuit_netns;
  ensure_veth(s, onprem_if(s), s.device, s.circuit.mtu_onprem);
  if (!link_exists(c, bridge_if(s))) must_run({"ip", "-n", c, "link", "add", bridge_if(s), "type", "bridge"});
  for (std::size_t k = 0; k < s.instances.size(); ++k) {
    ensure_veth(s, vpc_port_if(s, k), s.instances[k], s.circuit.mtu_vpc);
    must_run({"ip", "-n", c, "link", "set", vpc_port_if(s, k), "master", bridge_if(s)});
  }
  must_run({"ip", "-n", c, "link", "set", bridge_if(s), "mtu", std::to_string(s.circuit.mtu_vpc), "gso_max_segs", "1",
            "up"});
  must_run({"ip", "-n", c, "addr", "replace", cidr(s.onprem.address, s.onprem.prefix), "dev", onprem_if(s)});
  must_run({"ip", "-n", c, "addr", "replace", cidr(s.vpc.address, s.vpc.prefix), "dev", bridge_if(s)});
  must_run({"ip", "netns", "exec", c, "sysctl", "-qw", "net.ipv4.ip_forward=1"});
  address_host(s, s.device, s.onprem);
  for (const auto& h : s.instances) address_host(s, h, s.vpc);
  apply_tbf(s);
  nft_load(c, circuit_ruleset(s));
  nft_load(s.device.netns, host_ruleset(s));
  for (const auto& h : s.instances) nft_load(h.netns, host_ruleset(s));
}

}  // namespace

void lab_up(const lab_spec& s) {
  require_root();
  try {
    build(s);
  } catch (const lab_error& e) {
    // A half-made lab is harmless (all of it inside its namespaces) but should not be left behind.
    throw lab_error(fmt::format("{} (`lab down {}` removes what was made)", e.what(), s.source));
  }
}

void lab_down(const lab_spec& s) {
  require_root();
  std::vector<std::string> order;
  for (const auto& h : s.instances) order.push_back(h.netns);
  order.push_back(s.device.netns);
  order.push_back(s.circuit_netns);
  const auto have = existing_netns();
  for (const auto& ns : order) {
    if (!have.count(ns)) continue;
    end_processes(ns);
    must_run({"ip", "netns", "del", ns});
  }
}

}  // namespace lab
