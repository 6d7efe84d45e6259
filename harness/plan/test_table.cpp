// The [[tests]] part of a plan and the checks needing the whole test (port clashes, unsendable sizes).
#include "core/base/limits.hpp"
#include "core/base/units.hpp"
#include "core/policy/receive_mode.hpp"
#include "core/sys/socket.hpp"
#include "harness/plan/plan.hpp"
#include "harness/plan/plan_toml.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace harness {
namespace {

std::vector<std::string> host_list(const plan& p, const toml_reader& r, const toml::node& n, const char* key) {
  if (n.is_string()) {  // a group name, or one host
    const std::string name = n.as_string()->get();
    if (auto g = p.groups.find(name); g != p.groups.end()) return g->second;
    return {host_ref(p, r, n, key)};
  }
  std::vector<std::string> out;
  for (const toml::node& e : r.array(n, key)) out.push_back(host_ref(p, r, e, key));
  if (out.empty()) fail_at(n.source(), fmt::format("{}: '{}' is empty", r.context(), key));
  return out;
}

// message_size is the request's (netperf's -r 1,1 by default); a stream test has neither key.
void parse_rr(test_spec& t, toml_reader& r) {
  const std::int64_t hi = nb::is_udp(t.kind) ? nb::max_udp_message_size : nb::max_tcp_message_size;
  if (!nb::is_rr(t.kind)) {
    for (const char* key : {"response_size", "burst"})
      if (const toml::node* n = r.find(key))
        fail_at(n->source(), fmt::format("{}: '{}' only applies to UDP_RR and TCP_RR", r.context(), key));
    return;
  }
  if (!r.find("message_size")) t.message_sizes = {1};
  t.response_size = static_cast<std::uint32_t>(r.integer_or("response_size", 1, 1, hi));
  t.burst = static_cast<std::uint32_t>(r.integer_or("burst", 0, 0, nb::max_rr_burst));
  if (const toml::node* n = r.find("rate"))
    fail_at(n->source(), fmt::format("{}: a request/response test is paced in transactions: give 'pps'", r.context()));
  if (t.reverse)
    fail_at(r.need("reverse").source(), fmt::format("{}: a request/response test has no reverse", r.context()));
  const std::uint32_t smallest =
      std::min(*std::min_element(t.message_sizes.begin(), t.message_sizes.end()), t.response_size);
  if (t.kind == nb::test_kind::udp_rr && t.burst > 0 && smallest < 8)  // as netload refuses it
    fail_at(r.need("burst").source(), fmt::format("{}: a UDP_RR burst needs requests and answers of 8 bytes or more "
                                                  "(room for the transaction's number)",
                                                  r.context()));
}

// A UDP_RR probe beside a stream's load: idle is whole intervals so one ends at T0; its messages carry a
// transaction number (8 bytes), so a late answer is never taken for another's.
void parse_probe(test_spec& t, toml_reader& r, double interval) {
  const toml::node* n = r.find("latency_probe");
  if (!n) return;
  if (nb::is_rr(t.kind))
    fail_at(n->source(), fmt::format("{}: 'latency_probe' goes beside a stream test's load; this test is itself "
                                     "request/response",
                                     r.context()));
  if (n->is_boolean()) {
    if (n->as_boolean()->get()) t.probe = probe_spec{};
    return;
  }
  toml_reader pr(r.table(*n, "latency_probe"), r.context() + " latency_probe");
  probe_spec p;
  p.pps = pr.number_or("pps", p.pps, 1, 10000);
  p.size = static_cast<std::uint32_t>(pr.integer_or("size", p.size, 16, 1400));
  p.idle = pr.number_or("idle", p.idle, 0.1, 600);
  if (const double whole = std::round(p.idle / interval); whole < 1 || std::abs(p.idle - whole * interval) > 1e-6)
    fail_at(pr.need("idle").source(),
            fmt::format("{}: idle {:g} s is not a whole number of the plan's {:g}-s intervals", pr.context(), p.idle,
                        interval));
  pr.done();
  t.probe = p;
}

void parse_sizes(test_spec& t, toml_reader& r) {
  if (nb::is_rr(t.kind) && !r.find("message_size")) return;  // netperf's 1 byte
  const toml::node& n = r.need("message_size");
  const std::int64_t hi = nb::is_udp(t.kind) ? nb::max_udp_message_size : nb::max_tcp_message_size;
  auto one = [&](const toml::node& e) {
    if (e.is_integer() && (e.as_integer()->get() < 1 || e.as_integer()->get() > hi))
      fail_at(e.source(), fmt::format("{}: message_size {} is impossible for {} (1 to {} bytes)", r.context(),
                                      e.as_integer()->get(), nb::to_string(t.kind), hi));
    t.message_sizes.push_back(static_cast<std::uint32_t>(r.integer(e, "message_size", 1, hi)));
  };
  if (n.is_array()) {
    for (const toml::node& e : *n.as_array()) one(e);
    if (t.message_sizes.empty()) fail_at(n.source(), fmt::format("{}: 'message_size' is empty", r.context()));
  } else {
    one(n);
  }
}

// One value or a list.
void parse_loads(test_spec& t, toml_reader& r) {
  const toml::node* pps = r.find("pps");
  const toml::node* rate = r.find("rate");
  if (pps && rate) fail_at(rate->source(), fmt::format("{}: give 'pps' or 'rate', not both", r.context()));
  const toml::node* n = pps ? pps : rate;
  if (!n) return;
  auto one = [&](const toml::node& e) {
    load_level l;
    if (pps) {
      l.pps = r.number(e, "pps", 1, 1e9);
    } else {
      l.rate = r.string(e, "rate");
      try {
        if (nb::parse_rate(*l.rate) <= 0) throw std::invalid_argument("not positive");
      } catch (const std::exception&) {
        fail_at(e.source(), fmt::format("{}: rate '{}' is not a bit rate like 100M or 9G", r.context(), *l.rate));
      }
    }
    t.loads.push_back(l);
  };
  t.loads.clear();
  if (n->is_array())
    for (const toml::node& e : *n->as_array()) one(e);
  else one(*n);
  if (t.loads.empty()) fail_at(n->source(), fmt::format("{}: '{}' is empty", r.context(), pps ? "pps" : "rate"));
}

// "1,0", or "1" for netload alone.
std::string parse_affinity(toml_reader& r) {
  const toml::node* n = r.find("affinity");
  if (!n) return {};
  const std::string s = r.string(*n, "affinity");
  const auto comma = s.find(',');
  auto cpu_ok = [](const std::string& x) {
    return x.empty() || (x.size() <= 4 && x.find_first_not_of("0123456789") == std::string::npos);
  };
  if (s.empty() || !cpu_ok(s.substr(0, comma)) || (comma != std::string::npos && !cpu_ok(s.substr(comma + 1))))
    fail_at(n->source(),
            fmt::format("{}: affinity '{}' is not netperf's -T l,r (CPU numbers, e.g. \"1,0\")", r.context(), s));
  return s;
}

std::string buffer(toml_reader& r, const char* key) {
  const toml::node* n = r.find(key);
  if (!n) return {};
  std::string s =
      n->is_integer() ? std::to_string(r.integer(*n, key, 1, nb::max_socket_buffer_request)) : r.string(*n, key);
  try {
    const auto bytes = nb::parse_size(s);
    if (bytes == 0 || bytes > nb::max_socket_buffer_request) throw std::invalid_argument("range");
  } catch (const std::exception&) {
    fail_at(n->source(),
            fmt::format("{}: '{}' = '{}' is not a socket buffer size like 256K (1 byte to 1G)", r.context(), key, s));
  }
  return s;
}

void parse_topology(const plan& p, test_spec& t, toml_reader& r) {
  const toml::node& n = r.need("topology");
  const std::string s = r.string(n, "topology");
  const auto topo = topology_named(s);
  if (!topo) fail_at(n.source(), fmt::format("{}: topology '{}' is not one of fan-in, fan-out, pairs", r.context(), s));
  t.topo = *topo;
  if (t.topo == topology::fan_in) {
    t.server = host_ref(p, r, r.need("server"), "server");
    t.instances = host_list(p, r, r.need("clients"), "clients");
  } else if (t.topo == topology::fan_out) {
    t.client = host_ref(p, r, r.need("client"), "client");
    t.instances = host_list(p, r, r.need("servers"), "servers");
  } else {
    t.both_directions = r.boolean_or("both_directions", false);
    for (const toml::node& e : r.array(r.need("pairs"), "pairs")) {
      toml_reader pr(r.table(e, "pairs"), r.context() + " pair");
      pair_spec ps;
      ps.from = host_ref(p, pr, pr.need("from"), "from");
      ps.to = host_ref(p, pr, pr.need("to"), "to");
      if (const toml::node* c = pr.find("category")) {
        ps.category = pr.string(*c, "category");
        check_name(c->source(), pr.context(), "category", ps.category, name_use::text);
      }
      pr.done();
      t.pairs.push_back(ps);
    }
    if (t.pairs.empty()) fail_at(n.source(), fmt::format("{}: 'pairs' is empty", r.context()));
  }
}

// Excludes both_directions (one after the other).
void parse_bidirectional(test_spec& t, toml_reader& r) {
  const toml::node* n = r.find("bidirectional");
  if (!n) return;
  t.bidirectional = r.boolean_or("bidirectional", false);
  if (!t.bidirectional) return;
  auto refuse = [&](const char* what) {
    fail_at(n->source(), fmt::format("{}: 'bidirectional' runs both directions at once; {}", r.context(), what));
  };
  if (t.both_directions) refuse("'both_directions' runs them one after the other: give one of the two");
  if (t.reverse) refuse("'reverse' is one of them: leave it out");
  if (t.search) refuse("a rate 'search' finds one direction's rate: leave 'bidirectional' out");
}

void check_ports(const test_spec& t, const toml_reader& r, const std::string& loc) {
  auto fail = [&](const std::string& m) { throw plan_error(fmt::format("{}: {}: {}", loc, r.context(), m)); };
  const std::size_t need = t.topo == topology::pairs ? 1 : t.instances.size();
  if (t.ports.size() < need)
    fail(fmt::format("{} instances need {} ports, the plan gives {}", need, need, t.ports.size()));
  std::set<std::pair<std::string, std::uint16_t>> used;
  for (std::size_t i = 0; i < need; ++i) {
    const std::string server = t.topo == topology::fan_in    ? t.server
                               : t.topo == topology::fan_out ? t.instances[i]
                                                             : "";
    if (t.ports[i] != 0 && !used.emplace(server, t.ports[i]).second)
      fail(fmt::format("port clash: port {} is used twice on host '{}'", t.ports[i], server));
  }
}

// The older recv_copy = true is "copy", false "discard"; with recv_mode given, they must agree.
void parse_recv_mode_key(test_spec& t, toml_reader& r) {
  if (const toml::node* n = r.find("recv_mode")) {
    t.recv_mode = r.string(*n, "recv_mode");
    if (!nb::parse_recv_mode(t.recv_mode))
      fail_at(n->source(), fmt::format("{}: recv_mode '{}' is not auto, copy or discard", r.context(), t.recv_mode));
  }
  const toml::node* old = r.find("recv_copy");
  if (!old) return;
  const std::string said = r.boolean_or("recv_copy", false) ? "copy" : "discard";
  if (r.find("recv_mode") && t.recv_mode != said)
    fail_at(old->source(), fmt::format("{}: recv_copy = {} and recv_mode = '{}' disagree: give recv_mode only",
                                       r.context(), said == "copy", t.recv_mode));
  t.recv_mode = said;
}

void parse_tcp_options(test_spec& t, toml_reader& r) {
  for (const char* key : {"congestion", "recv_size", "zerocopy", "send_copy", "recv_copy", "recv_mode"})
    if (const toml::node* n = r.find(key);
        n && (std::string_view(key) == "congestion" ? !nb::is_tcp(t.kind) : t.kind != nb::test_kind::tcp_stream))
      fail_at(n->source(), fmt::format("{}: '{}' only applies to {}", r.context(), key,
                                       std::string_view(key) == "congestion" ? "TCP tests" : "TCP_STREAM"));
  if (const toml::node* n = r.find("congestion")) {
    t.congestion = r.string(*n, "congestion");
    if (!nb::valid_congestion_name(t.congestion))
      fail_at(n->source(),
              fmt::format("{}: congestion '{}' is not an algorithm's name (1 to 15 letters, digits, '_' or '-')",
                          r.context(), t.congestion));
  }
  if (const toml::node* n = r.find("recv_size")) {
    t.recv_size = n->is_integer() ? std::to_string(r.integer(*n, "recv_size", 1, nb::max_tcp_message_size))
                                  : r.string(*n, "recv_size");
    auto size_of = [](const std::string& text) -> std::uint64_t {
      try {
        return nb::parse_size(text);
      } catch (const std::invalid_argument&) {
        return 0;
      }
    };
    const std::uint64_t bytes = size_of(t.recv_size);
    if (bytes == 0 || bytes > nb::max_tcp_message_size)
      fail_at(n->source(),
              fmt::format("{}: recv_size '{}' is not a size like 64K (1 byte to 16M)", r.context(), t.recv_size));
  }
  t.zerocopy = r.boolean_or("zerocopy", false);
  t.send_copy = r.boolean_or("send_copy", false);
  parse_recv_mode_key(t, r);
  if (t.zerocopy && t.send_copy)
    fail_at(r.find("send_copy")->source(),
            fmt::format("{}: 'send_copy' and 'zerocopy': one way of sending, not both", r.context()));
}

void check_keys(const plan& p, const test_spec& t, const toml_reader& r, const toml::table& tt) {
  auto need = [&](const std::string& client, const std::string& server) {
    if (!p.hosts.at(server).psk_file.empty() && p.hosts.at(client).psk_file.empty())
      fail_at(tt.source(), fmt::format("{}: host '{}' has no psk_file, but the netserve on '{}' requires a key",
                                       r.context(), client, server));
  };
  if (t.topo == topology::fan_in)
    for (const auto& c : t.instances) need(c, t.server);
  else if (t.topo == topology::fan_out)
    for (const auto& s : t.instances) need(t.client, s);
  else
    for (const auto& pr : t.pairs) {
      need(pr.from, pr.to);
      if (t.both_directions) need(pr.to, pr.from);
    }
}

test_spec parse_test(const plan& p, const toml::table& tt, std::size_t index) {
  toml_reader r(tt, fmt::format("tests[{}]", index));
  test_spec t;
  const toml::node& name = r.need("name");
  t.name = r.string(name, "name");
  check_name(name.source(), r.context(), "name", t.name, name_use::path);
  if (t.name.find_first_of(" \t") != std::string::npos)
    fail_at(name.source(), fmt::format("{}: name '{}' must be without spaces", r.context(), t.name));
  if (const toml::node* kind = r.find("kind")) {
    const std::string s = r.string(*kind, "kind");
    const auto k = nb::parse_test_kind(s);
    if (!k)
      fail_at(kind->source(),
              fmt::format("{}: kind '{}' is not UDP_STREAM, TCP_STREAM, UDP_RR or TCP_RR", r.context(), s));
    t.kind = *k;
  }
  t.reverse = r.boolean_or("reverse", false);
  parse_sizes(t, r);
  parse_rr(t, r);
  parse_loads(t, r);
  parse_search(t, r);
  parse_probe(t, r, p.interval);
  t.affinity = parse_affinity(r);
  t.streams = static_cast<std::uint32_t>(r.integer_or("streams", 1, 1, nb::max_streams_per_test));
  if (const toml::node* m = r.find("mss")) {
    if (!nb::is_tcp(t.kind)) fail_at(m->source(), fmt::format("{}: 'mss' only applies to TCP tests", r.context()));
    t.mss = static_cast<std::uint32_t>(r.integer(*m, "mss", nb::min_mss, nb::max_mss));
  }
  t.send_buffer = buffer(r, "send_buffer");
  t.recv_buffer = buffer(r, "recv_buffer");
  parse_tcp_options(t, r);
  t.dscp = static_cast<int>(r.integer_or("dscp", -1, 0, nb::max_dscp));
  parse_topology(p, t, r);
  parse_bidirectional(t, r);
  const toml::node* duration = r.find("duration");
  const toml::node* warmup = r.find("warmup");
  t.duration = duration ? r.number(*duration, "duration", 0.1, 86400) : p.duration;
  t.warmup = warmup ? r.number(*warmup, "warmup", 0, 86400) : p.warmup;
  t.repeats = static_cast<int>(r.integer_or("repeats", p.repeats, 1, 1000));
  if (t.warmup >= t.duration)
    fail_at(warmup     ? warmup->source()
            : duration ? duration->source()
                       : tt.source(),
            fmt::format("{}: warmup {} s leaves nothing of a {} s test", r.context(), t.warmup, t.duration));
  t.ports = p.ports;
  const toml::node* ports = r.find("ports");
  if (ports) t.ports = parse_ports(r, *ports);
  // Reported where the ports were given: the test or [defaults].
  check_ports(t, r, ports ? where(ports->source()) : !p.ports_where.empty() ? p.ports_where : where(tt.source()));
  check_keys(p, t, r, tt);
  r.done();
  return t;
}

}  // namespace

void parse_tests(plan& p, const toml::node& n) {
  const toml::table none;  // type checks only; the keys belong to the root table
  toml_reader r(none, "plan");
  const toml::array& a = r.array(n, "tests");
  if (a.empty()) fail_at(n.source(), "plan: 'tests' is empty");
  std::set<std::string> names;
  for (std::size_t i = 0; i < a.size(); ++i) {
    test_spec t = parse_test(p, r.table(a[i], "tests"), i);
    if (!names.insert(t.name).second)
      fail_at(a[i].source(), fmt::format("tests[{}]: test name '{}' is used twice", i, t.name));
    p.tests.push_back(std::move(t));
  }
}

}  // namespace harness
