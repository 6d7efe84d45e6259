// The lab built and removed with ip, tc and nft; nothing of it lives outside its namespaces.
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

// A missing kernel feature named plainly, not an obscure failure halfway through `up`.
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

// IPv6 off: router solicitations and MLD reports would add packets to the counters tests compare.
void ensure_netns(const std::string& ns, const std::set<std::string>& have) {
  if (!have.count(ns)) must_run({"ip", "netns", "add", ns});
  must_run({"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
            "net.ipv6.conf.default.disable_ipv6=1"});
  must_run({"ip", "-n", ns, "link", "set", "lo", "up"});
}

// Made in place: neither end appears in the machine's own namespace. gso_max_segs 1: GSO / TSO batches
// cut to wire-sized packets, as a NIC would, so the packet-rate limit and the counters see each one.
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

// On both circuit egresses, each direction shaped once: a 4-ms bucket, a 20-ms queue as `limit` bytes, as
// `latency` would add the bucket (bench/README.md#lab-tbf-queue).
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

// Both the dropped and the forwarded counted: a report says where a sender's surplus went. A burst of 10 ms:
// nft's 5 packets would cut sendmmsg batches below the rate. The router's own ICMP is output: never limited.
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

// The kernel's count of UDP datagrams delivered, to check netserve's.
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

// A process left inside (a failed run's netserve) keeps a namespace alive after its name is gone.
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
