#include "harness/plan/expand.hpp"

#include <fmt/format.h>

#include "core/base/limits.hpp"

#include <algorithm>
#include <cmath>

namespace harness {
namespace {

std::string run_id(const test_spec& t, std::uint32_t size, const load_level& load, int repeat,
                   const std::string& suffix) {
  std::string id = fmt::format("{}-m{}", t.name, size);
  if (t.loads.size() > 1) id += "-" + load.label();
  if (t.repeats > 1) id += fmt::format("-r{}", repeat);
  return suffix.empty() ? id : id + "-" + suffix;
}

void add_fan(run_spec& r, const test_spec& t) {
  if (t.topo == topology::fan_in) {
    r.role = fmt::format("{} as server", t.server);
    r.servers.push_back({t.server, {t.ports.begin(), t.ports.begin() + static_cast<long>(t.instances.size())}});
    for (std::size_t i = 0; i < t.instances.size(); ++i)
      r.instances.push_back(
          {fmt::format("{:02}-{}", i + 1, t.instances[i]), t.instances[i], t.server, 0, i, "", t.reverse});
    return;
  }
  r.role = fmt::format("{} as client", t.client);
  for (std::size_t i = 0; i < t.instances.size(); ++i) {
    std::size_t s = 0;
    while (s < r.servers.size() && r.servers[s].host != t.instances[i]) ++s;
    if (s == r.servers.size()) r.servers.push_back({t.instances[i], {}});
    r.servers[s].ports.push_back(t.ports[i]);
    r.instances.push_back({fmt::format("{:02}-{}", i + 1, t.instances[i]), t.client, t.instances[i], s,
                           r.servers[s].ports.size() - 1, "", t.reverse});
  }
}

// A reverse joins the same run, so the barrier gives both one T0, on its partner's port; "a-to-b" is
// joined by "b-to-a", "01-c1" by "01-c1-reverse".
void add_reverse(run_spec& r, const test_spec& t) {
  if (!t.bidirectional) return;
  r.bidirectional = true;
  const std::size_t n = r.instances.size();
  for (std::size_t k = 0; k < n; ++k) {
    instance_spec back = r.instances[k];
    back.reverse = true;
    back.name = t.topo == topology::pairs ? fmt::format("{}-to-{}", back.server, back.client) : back.name + "-reverse";
    r.instances.push_back(std::move(back));
  }
}

// On the first instance's path and port (netserve serves both tests there).
void add_probe(run_spec& r, const test_spec& t) {
  if (!t.probe || r.instances.empty()) return;
  instance_spec probe = r.instances.front();
  probe.name = "probe";
  probe.probe = true;
  r.instances.push_back(probe);
}

}  // namespace

std::vector<run_spec> expand(const plan& p) {
  std::vector<run_spec> runs;
  for (const test_spec& t : p.tests)
    for (std::uint32_t size : t.message_sizes)
      for (const load_level& load : t.loads)
        for (int rep = 1; rep <= t.repeats; ++rep) {
          run_spec base;
          base.load = load;
          base.test = t.name;
          base.topo = t.topo;
          base.kind = t.kind;
          base.message_size = size;
          base.repeat = rep;
          base.duration = t.duration;
          base.warmup = t.warmup;
          base.interval = p.interval;
          base.spec = &t;
          if (t.topo != topology::pairs) {
            base.id = run_id(t, size, load, rep, "");
            add_fan(base, t);
            add_reverse(base, t);
            add_probe(base, t);
            runs.push_back(base);
            continue;
          }
          // Each pair its own run, as in the tutorial.
          for (const pair_spec& ps : t.pairs)
            for (int dir = 0; dir < (t.both_directions ? 2 : 1); ++dir) {
              run_spec r = base;
              const std::string& from = dir ? ps.to : ps.from;
              const std::string& to = dir ? ps.from : ps.to;
              r.id = run_id(t, size, load, rep, fmt::format("{}-to-{}", from, to));
              r.role = "pairs";
              r.servers.push_back({to, {t.ports.front()}});
              r.instances.push_back({fmt::format("{}-to-{}", from, to), from, to, 0, 0, ps.category, t.reverse});
              add_reverse(r, t);
              add_probe(r, t);
              runs.push_back(r);
            }
        }
  return runs;
}

std::vector<std::string> netserve_command(const std::string& program, const host& server,
                                          const std::vector<std::uint16_t>& ports) {
  std::string list;
  for (auto port : ports) list += (list.empty() ? "" : ",") + std::to_string(port);
  std::vector<std::string> argv{program, "-p", list, "--bind", server.address};
  if (!server.psk_file.empty()) argv.insert(argv.end(), {"--psk-file", server.psk_file});
  if (server.engine == nb::receive_engine::xdp) {
    argv.insert(argv.end(), {"--engine", std::string(nb::to_string(server.engine)), "--interface", server.interface});
    if (server.xdp_pass) argv.push_back("--xdp-pass");
    if (!server.xdp_mode.empty()) argv.insert(argv.end(), {"--xdp-mode", server.xdp_mode});
  }
  return argv;
}

std::string source_address(const host& h) { return h.launcher == launcher_kind::local ? h.address : ""; }

namespace {

std::vector<std::string> netload_head(const std::string& program, const host& server, std::uint16_t port,
                                      std::string test, double seconds) {
  return {program,
          "-H",
          server.address,
          "-p",
          std::to_string(port),
          "-t",
          std::move(test),
          "-l",
          fmt::format("{:g}", seconds)};
}

std::vector<std::string> probe_command(const std::string& program, const run_spec& r, const host& server,
                                       std::uint16_t port, const host& client) {
  const probe_spec& p = *r.spec->probe;
  // A second's transactions in flight, so a queue holding round trips up to a second does not cut the rate.
  const auto burst = static_cast<std::uint32_t>(std::clamp(std::ceil(p.pps) - 1, 0.0, double{nb::max_rr_burst}));
  auto argv = netload_head(program, server, port, "UDP_RR", p.idle + r.duration);
  argv.insert(argv.end(), {"--pps", fmt::format("{:g}", p.pps), "--burst", std::to_string(burst)});
  if (std::string local = source_address(client); !local.empty()) argv.insert(argv.end(), {"-L", local});
  if (!server.psk_file.empty()) argv.insert(argv.end(), {"--psk-file", client.psk_file});
  argv.insert(argv.end(), {"--interval", fmt::format("{:g}", r.interval), "--json-stream", "--start-on-stdin", "--",
                           "-r", fmt::format("{},{}", p.size, p.size)});
  return argv;
}

}  // namespace

std::vector<std::string> netload_command(const std::string& program, const run_spec& r, const host& server,
                                         std::uint16_t port, const host& client, bool reverse, bool probe) {
  if (probe) {  // netload refuses it with a stock peer, in its own words
    std::vector<std::string> argv = probe_command(program, r, server, port, client);
    if (server.stock_peer()) argv.insert(argv.begin() + 1, {"--peer", server.peer});
    return argv;
  }
  const test_spec& t = *r.spec;
  auto argv = netload_head(program, server, port, std::string(nb::to_string(r.kind)), r.duration);
  if (server.stock_peer()) argv.insert(argv.end(), {"--peer", server.peer});
  if (std::string local = source_address(client); !local.empty()) argv.insert(argv.end(), {"-L", local});
  if (!server.psk_file.empty() && !server.stock_peer()) argv.insert(argv.end(), {"--psk-file", client.psk_file});
  if (r.load.pps) argv.insert(argv.end(), {"--pps", fmt::format("{:.6g}", *r.load.pps)});
  if (r.load.rate) argv.insert(argv.end(), {"--rate", *r.load.rate});
  if (!t.affinity.empty()) argv.insert(argv.end(), {"-T", t.affinity});
  if (t.streams > 1) argv.insert(argv.end(), {"--streams", std::to_string(t.streams)});
  if (reverse) argv.push_back("--reverse");
  if (t.dscp >= 0) argv.insert(argv.end(), {"--dscp", std::to_string(t.dscp)});
  argv.insert(argv.end(), {"--interval", fmt::format("{:g}", r.interval), "--json-stream", "--start-on-stdin", "--"});
  if (nb::is_rr(r.kind)) {
    argv.insert(argv.end(), {"-r", fmt::format("{},{}", r.message_size, t.response_size)});
    if (t.burst) argv.insert(argv.end(), {"-b", std::to_string(t.burst)});
  } else {
    argv.insert(argv.end(), {"-m", std::to_string(r.message_size)});
  }
  if (!t.send_buffer.empty()) argv.insert(argv.end(), {"-s", t.send_buffer});
  if (!t.recv_buffer.empty()) argv.insert(argv.end(), {"-S", t.recv_buffer});
  if (t.mss) argv.insert(argv.end(), {"--mss", std::to_string(t.mss)});
  if (!t.congestion.empty()) argv.insert(argv.end(), {"-K", t.congestion});
  if (!t.recv_size.empty()) argv.insert(argv.end(), {"--recv-size", t.recv_size});
  if (t.zerocopy) argv.push_back("--zerocopy");
  if (t.send_copy) argv.push_back("--send-copy");
  if (!t.recv_mode.empty() && t.recv_mode != "auto") argv.insert(argv.end(), {"--recv-mode", t.recv_mode});
  return argv;
}

nlohmann::json to_json(const run_spec& r, const plan& p) {
  nlohmann::json inst = nlohmann::json::array(), probe = nullptr;
  for (const auto& i : r.instances) {
    nlohmann::json j = {{"name", i.name},
                        {"client", i.client},
                        {"client_address", p.hosts.at(i.client).address},
                        {"server", i.server},
                        {"server_address", p.hosts.at(i.server).address},
                        {"category", i.category},
                        {"reverse", i.reverse}};
    if (!i.probe) inst.push_back(std::move(j));
    else
      probe = {
          {"instance", j}, {"pps", r.spec->probe->pps}, {"size", r.spec->probe->size}, {"idle", r.spec->probe->idle}};
  }
  nlohmann::json j = measurement_json(r);
  j.update({{"id", r.id},
            {"repeat", r.repeat},
            {"duration", r.duration},
            {"warmup", r.warmup},
            {"interval", r.interval},
            {"skew_bound_ms", p.skew_bound_ms},
            {"instances", inst},
            {"requested_pps", r.load.pps ? nlohmann::json(*r.load.pps) : nlohmann::json(nullptr)},
            {"requested_rate", r.load.rate ? nlohmann::json(*r.load.rate) : nlohmann::json(nullptr)},
            {"search_trial", r.search_trial},
            {"bidirectional", r.bidirectional},
            {"probe", probe}});
  return j;
}

run_spec trial_of(const run_spec& r, const std::string& id, double offered_pps, double duration, nlohmann::json tag,
                  bool with_probe) {
  run_spec t = r;
  t.id = id;
  t.duration = duration;
  t.interval = std::min(r.interval, duration);  // netload wants at least one interval per test
  t.warmup = std::min(r.warmup, duration / 2);
  t.load = {};
  if (!with_probe && t.probe()) t.instances.pop_back();
  const std::size_t load_instances = t.instances.size() - (t.probe() ? 1 : 0);
  if (offered_pps > 0) t.load.pps = offered_pps / static_cast<double>(load_instances);
  t.search_trial = std::move(tag);
  return t;
}

}  // namespace harness
