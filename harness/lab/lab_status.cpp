#include "harness/lab/lab.hpp"
#include "harness/lab/lab_exec.hpp"
#include "harness/lab/lab_names.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <map>
#include <set>
#include <sstream>

namespace lab {

void require_root() {
  if (::geteuid() != 0)
    throw lab_error("the lab needs root (it creates network namespaces, veths, qdiscs and nft tables): run it as root");
}

std::set<std::string> existing_netns() {
  std::set<std::string> out;
  std::istringstream in(must_run({"ip", "netns", "list"}));
  for (std::string line; std::getline(in, line);)
    if (const auto name = line.substr(0, line.find(' ')); !name.empty()) out.insert(name);
  return out;
}

namespace {

// name -> {packets, bytes} of the lab's table in one namespace.
nlohmann::json nft_counters(const lab_spec& s, const std::string& ns) {
  nlohmann::json out = nlohmann::json::object();
  const auto r = try_run({"ip", "netns", "exec", ns, "nft", "-j", "list", "table", "inet", nft_table(s)});
  if (r.exit_code != 0) return out;
  const auto doc = nlohmann::json::parse(r.stdout_text);  // kept alive: the loop below walks into it
  for (const auto& item : doc.at("nftables"))
    if (item.contains("counter")) {
      const auto& c = item["counter"];
      out[c.at("name").get<std::string>()] = {{"packets", c.at("packets")}, {"bytes", c.at("bytes")}};
    }
  return out;
}

nlohmann::json tbf_counters(const std::string& ns, const std::string& dev) {
  const auto r = try_run({"tc", "-n", ns, "-j", "-s", "qdisc", "show", "dev", dev});
  if (r.exit_code != 0) return nullptr;
  for (const auto& q : nlohmann::json::parse(r.stdout_text))
    if (q.value("kind", "") == "tbf")
      return {{"bytes", q.at("bytes")}, {"packets", q.at("packets")}, {"drops", q.at("drops")}};
  return nullptr;
}

std::string indent(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += "    " + line + "\n";
  return out;
}

std::string status_of(const lab_spec& s) {
  const auto have = existing_netns();
  std::string out = fmt::format("lab {} ({}): circuit rate {}, pps {}, MTU on-prem {} / VPC {}\n", s.name, s.source,
                                s.circuit.rate_bps ? fmt::format("{:.0f} bit/s", *s.circuit.rate_bps) : "unlimited",
                                s.circuit.pps ? std::to_string(*s.circuit.pps) : "unlimited", s.circuit.mtu_onprem,
                                s.circuit.mtu_vpc);
  std::vector<std::pair<std::string, std::string>> all{{"circuit", s.circuit_netns}, {"device", s.device.netns}};
  for (const auto& h : s.instances) all.emplace_back(h.role, h.netns);
  for (const auto& [role, ns] : all) {
    if (!have.count(ns)) {
      out += fmt::format("  {:8} {}: absent\n", role, ns);
      continue;
    }
    out += fmt::format("  {:8} {}: present\n", role, ns);
    out += indent(try_run({"ip", "-n", ns, "-br", "addr"}).stdout_text);
    const auto c = nft_counters(s, ns);
    if (!c.empty()) out += indent(fmt::format("nft {}", c.dump()));
  }
  if (have.count(s.circuit_netns))
    for (const std::string& dev : {onprem_if(s), bridge_if(s)})
      if (const auto t = tbf_counters(s.circuit_netns, dev); !t.is_null())
        out += indent(fmt::format("tbf {} {}", dev, t.dump()));
  return out;
}

std::string status_all() {
  std::map<std::string, std::vector<std::string>> labs;
  for (const auto& ns : existing_netns()) {
    std::istringstream in(try_run({"ip", "netns", "exec", ns, "nft", "list", "tables"}).stdout_text);
    for (std::string word; in >> word;)
      if (word.rfind("nb_lab_", 0) == 0) labs[word.substr(7)].push_back(ns);
  }
  if (labs.empty()) return "no lab namespaces on this machine\n";
  std::string out;
  for (const auto& [name, spaces] : labs) out += fmt::format("lab {}: {}\n", name, fmt::join(spaces, " "));
  return out;
}

}  // namespace

std::string lab_status(const lab_spec* spec) {
  require_root();
  return spec ? status_of(*spec) : status_all();
}

std::string lab_counters(const lab_spec& s) {
  require_root();
  nlohmann::json j{{"lab", s.name}};
  auto host = [&](const lab_host& h) {
    const auto c = nft_counters(s, h.netns);
    return nlohmann::json{
        {"netns", h.netns},
        {"address", format_ipv4(h.address)},
        {"udp_delivered", c.contains("udp_delivered") ? c["udp_delivered"] : nlohmann::json(nullptr)}};
  };
  j["hosts"]["device"] = host(s.device);
  for (const auto& h : s.instances) j["hosts"][h.role] = host(h);
  j["circuit"]["nft"] = nft_counters(s, s.circuit_netns);
  j["circuit"]["tbf_to_onprem"] = tbf_counters(s.circuit_netns, onprem_if(s));
  j["circuit"]["tbf_to_vpc"] = tbf_counters(s.circuit_netns, bridge_if(s));
  return j.dump(2) + "\n";
}

}  // namespace lab
