#include "harness/records/host_check.hpp"

#include "core/base/version.hpp"
#include "core/json/json_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace harness {

using nlohmann::json;

std::optional<clock_offset> estimate_offset(const std::vector<clock_reading>& readings) {
  const clock_reading* best = nullptr;
  for (const auto& r : readings) {
    if (r.answered_ns < r.asked_ns) return std::nullopt;  // our own clock stepped back
    if (!best || r.answered_ns - r.asked_ns < best->answered_ns - best->asked_ns) best = &r;
  }
  if (!best) return std::nullopt;
  // Halve in integers: epoch nanoseconds in a double keep only ~0.2 us.
  const std::int64_t mid = best->asked_ns + (best->answered_ns - best->asked_ns) / 2;
  return clock_offset{static_cast<double>(best->host_ns - mid) / 1e6,
                      static_cast<double>(best->answered_ns - best->asked_ns) / 2e6, static_cast<int>(readings.size())};
}

std::optional<std::string> facts_problem(const json& f) {
  if (!f.is_object()) return "not a JSON object";
  if (!f.contains("type") || f["type"] != "host_info") return "no \"type\": \"host_info\"";
  if (!f.contains("version") || !f["version"].is_string()) return "no version";
  for (const char* n : {"cpus", "cpus_allowed"})
    if (!f.contains(n) || !f[n].is_number_integer() || f[n].get<long long>() < 0)
      return fmt::format("'{}' is not a count", n);
  if (!f.contains("kernel") || !f["kernel"].is_string()) return "no kernel";
  if (!f.contains("features") || !f["features"].is_object()) return "no features";
  for (const auto& [name, has] : f["features"].items())
    if (!has.is_boolean()) return fmt::format("feature '{}' is not true or false", name);
  if (!f.contains("mtu") || !f["mtu"].is_object()) return "no mtu";
  for (const auto& [peer, m] : f["mtu"].items()) {
    const bool known =
        m.is_object() && m.contains("mtu") && m["mtu"].is_number_integer() && m.contains("dev") && m["dev"].is_string();
    const bool failed = m.is_object() && m.contains("error") && m["error"].is_string();
    if (!known && !failed) return fmt::format("the MTU to '{}' is neither a number and a device nor an error", peer);
  }
  return std::nullopt;
}

namespace {

// A named object: iterating `value(...)`'s temporary trips GCC 12's maybe-uninitialized.
const json& member(const json& facts, const char* key) {
  static const json none = json::object();
  if (!facts.is_object()) return none;
  const auto it = facts.find(key);
  return it != facts.end() && it->is_object() ? *it : none;
}

void judge_clock(host_check& c, double skew_bound_ms, bool allow_offset) {
  if (!c.clock) {  // netload --host-info's own error says it
    if (c.facts.is_object())
      c.errors.push_back("its clock could not be read (netload --host-info gave no clock answer)");
    return;
  }
  const clock_offset& k = *c.clock;
  const std::string said = fmt::format("clock {:+.1f} ms (+- {:.1f} ms) from the harness's", k.offset_ms, k.bound_ms);
  // Off for certain when even the nearest value within the bound exceeds the skew bound.
  if (std::abs(k.offset_ms) - k.bound_ms > skew_bound_ms) {
    if (allow_offset) c.notes.push_back(fmt::format("{}; --allow-offset: its start instant is corrected by it", said));
    else
      c.errors.push_back(
          fmt::format("{}, more than the start-skew bound of {:g} ms: set its clock (NTP, chrony) or "
                      "run with --allow-offset to correct each host's start instant",
                      said, skew_bound_ms));
  } else if (std::abs(k.offset_ms) + k.bound_ms > skew_bound_ms) {
    c.notes.push_back(fmt::format("{}: within its bound it may be more than the start-skew bound of {:g} ms off", said,
                                  skew_bound_ms));
  }
  if (k.bound_ms > skew_bound_ms / 2)
    c.notes.push_back(
        fmt::format("the clock round trip is long: the offset is known only to +- {:.1f} ms, against a "
                    "start-skew bound of {:g} ms",
                    k.bound_ms, skew_bound_ms));
}

void judge_facts(host_check& c) {
  if (facts_problem(c.facts)) return;
  for (const auto& [name, has] : member(c.facts, "features").items())
    if (has.is_boolean() && !has.get<bool>())
      c.notes.push_back(
          fmt::format("the kernel lacks '{}': the data plane falls back (README: which kernel gives "
                      "which data path)",
                      name));
  for (const auto& [peer, m] : member(c.facts, "mtu").items()) {
    if (m.contains("error"))  // may be an ssh alias the host reaches by another name
      c.notes.push_back(fmt::format("no MTU to peer {}: {}", peer, m["error"].get<std::string>()));
    else if (m.value("mtu", 0) < 1500)  // IPv4 20 + UDP 8, IPv6 40 + 8
      c.notes.push_back(fmt::format("path MTU to {} is {} (via {}): datagrams above {} bytes are fragmented or refused",
                                    peer, m.value("mtu", 0), m.value("dev", "?"),
                                    m.value("mtu", 0) - (peer.find(':') == std::string::npos ? 28 : 48)));
  }
}

}  // namespace

void judge(host_check& c, double skew_bound_ms, bool allow_offset) {
  if (!c.reachable) return;  // its error says why
  for (const auto& [prog, v] : {std::pair{"netload", c.netload_version}, std::pair{"netserve", c.netserve_version}})
    if (!v.empty() && v != nb::version)
      c.errors.push_back(fmt::format("{} is version {}, the harness {}: run `harness deploy`", prog, v, nb::version));
  judge_clock(c, skew_bound_ms, allow_offset);
  judge_facts(c);
}

namespace {

std::string features_text(const json& facts) {
  std::string out;
  for (const auto& [name, has] : member(facts, "features").items())
    out += fmt::format("{}{}{}", out.empty() ? "" : " ", has.is_boolean() && has.get<bool>() ? "" : "-", name);
  return out.empty() ? "?" : out;
}

// Eight peers behind one interface are one entry.
std::string mtu_text(const json& facts) {
  std::set<std::string> seen;
  std::string out;
  for (const auto& [peer, m] : member(facts, "mtu").items()) {
    const std::string one = m.contains("mtu") ? fmt::format("{}/{}", m["mtu"].get<int>(), m.value("dev", "?")) : "none";
    if (seen.insert(one).second) out += (out.empty() ? "" : " ") + one;
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string check_table(const std::vector<host_check>& checks) {
  std::string out = fmt::format("{:<12} {:<18} {:<7} {:<8} {:>20} {:>5} {:<32} {:<22} {}\n", "host", "address", "reach",
                                "version", "clock offset ms", "cpus", "kernel", "features", "path MTU/dev");
  for (const auto& c : checks) {
    const json facts = c.facts.is_object() ? c.facts : json::object();
    const std::string clock =
        c.clock ? fmt::format("{:+.2f} +- {:.2f}", c.clock->offset_ms, c.clock->bound_ms) : std::string("-");
    const std::string version = c.netload_version.empty() ? "-" : c.netload_version;
    out += fmt::format("{:<12} {:<18} {:<7} {:<8} {:>20} {:>5} {:<32} {:<22} {}\n", c.host, c.address,
                       c.reachable ? "yes" : "NO", version, clock, facts.value("cpus", 0),
                       facts.value("kernel", std::string("-")), c.facts.is_object() ? features_text(facts) : "-",
                       mtu_text(facts));
  }
  for (const auto& c : checks) {
    for (const auto& e : c.errors) out += fmt::format("error: host '{}' ({}): {}\n", c.host, c.address, e);
    for (const auto& w : c.warnings) out += fmt::format("warning: host '{}': {}\n", c.host, w);
    for (const auto& n : c.notes) out += fmt::format("note: host '{}': {}\n", c.host, n);
  }
  return out;
}

json to_json(const host_check& c) {
  json j = nb::write_described(c);
  j["warnings"] = c.warnings;
  if (c.clock) j["clock"] = nb::write_described(*c.clock);
  return j;
}

host_check host_check_from_json(const json& j, const std::string& context) {
  using fields = nb::json_fields<std::runtime_error>;
  fields f(j, context);
  host_check c = f.read_described<host_check>();
  c.warnings = f.get_or<std::vector<std::string>>("warnings", {});  // older checks lack them
  if (const json clock = f.get_or<json>("clock", nullptr); !clock.is_null())
    c.clock = fields::read_object<clock_offset>(clock, context + ": clock");
  f.done();
  return c;
}

std::map<std::string, std::map<std::string, udp_payload>> udp_payloads_per_host(const plan& p,
                                                                                const std::vector<run_spec>& runs) {
  std::map<std::string, std::map<std::string, udp_payload>> out;
  auto sends = [&](const std::string& from, const std::string& to, std::uint32_t bytes, const std::string& test) {
    udp_payload& most = out[from][p.hosts.at(to).address];
    if (bytes > most.bytes) most = {bytes, test};
  };
  for (const auto& r : runs) {
    const bool udp = r.kind == nb::test_kind::udp_stream || r.kind == nb::test_kind::udp_rr;
    for (const auto& i : r.instances) {
      if (i.probe && r.spec && r.spec->probe) {  // UDP_RR of its own size, both ways
        sends(i.client, i.server, r.spec->probe->size, r.test);
        sends(i.server, i.client, r.spec->probe->size, r.test);
        continue;
      }
      if (!udp) continue;
      const std::string& from = i.reverse ? i.server : i.client;
      const std::string& to = i.reverse ? i.client : i.server;
      sends(from, to, r.message_size, r.test);
      if (r.kind == nb::test_kind::udp_rr && r.spec) sends(to, from, r.spec->response_size, r.test);
    }
  }
  return out;
}

void judge_payloads(host_check& c, const std::map<std::string, udp_payload>& payloads) {
  if (facts_problem(c.facts)) return;
  for (const auto& [peer, m] : member(c.facts, "mtu").items()) {
    const auto it = payloads.find(peer);
    if (it == payloads.end() || !m.contains("mtu")) continue;
    const int headers = peer.find(':') == std::string::npos ? 28 : 48;
    const int largest = m.value("mtu", 0) - headers;
    if (static_cast<long>(it->second.bytes) > largest)
      c.warnings.push_back(fmt::format(
          "test '{}' sends {}-byte UDP datagrams to {}, but the path MTU there is {} (via {}): "
          "at most {} bytes fit ({} of headers); netload sends with DF, so that run fails",
          it->second.test, it->second.bytes, peer, m.value("mtu", 0), m.value("dev", "?"), largest, headers));
  }
}

std::map<std::string, std::set<std::string>> peers_per_host(const plan& p, const std::vector<run_spec>& runs) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& r : runs)
    for (const auto& i : r.instances) {
      out[i.server];  // a server with no peer of its own too
      out[i.client].insert(p.hosts.at(i.server).address);
      if (i.reverse) out[i.server].insert(p.hosts.at(i.client).address);
    }
  return out;
}

}  // namespace harness
