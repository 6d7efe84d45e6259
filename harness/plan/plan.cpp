#include "harness/plan/plan.hpp"

#include "core/base/limits.hpp"
#include "core/base/port_spec.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "harness/plan/plan_toml.hpp"
#include "harness/toml/toml_bounds.hpp"

#include <set>

namespace harness {
namespace {

template <class E>
using names = std::initializer_list<std::pair<E, const char*>>;
constexpr names<launcher_kind> launcher_names = {
    {launcher_kind::local, "local"}, {launcher_kind::ssh, "ssh"}, {launcher_kind::netns, "netns"}};
constexpr names<topology> topology_names = {
    {topology::fan_in, "fan-in"}, {topology::fan_out, "fan-out"}, {topology::pairs, "pairs"}};

template <class E>
const char* name_of(names<E> table, E value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "?";
}

template <class E>
std::optional<E> value_of(names<E> table, std::string_view name) {
  for (const auto& [v, n] : table)
    if (n == name) return v;
  return std::nullopt;
}

bool is_c1(std::string_view s, std::size_t i) {  // U+0080..U+009F: 0xc2 0x80..0x9f
  return static_cast<unsigned char>(s[i]) == 0xc2 && i + 1 < s.size() &&
         (static_cast<unsigned char>(s[i + 1]) & 0xe0) == 0x80;
}

}  // namespace

std::string name_problem(std::string_view name, name_use use) {
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f || is_c1(name, i))
      return fmt::format("holds a control character ({}): names are printed, and must print as they are",
                         nb::printable(name.substr(i, c < 0x80 ? 1 : 2)));
  }
  if (use == name_use::text) return {};
  if (name.empty()) return "is empty";
  if (name.find('/') != std::string_view::npos || name == "." || name == "..")
    return "would leave its folder: it is part of a file or folder name under --results, where '/', '.' and '..' "
           "have no place";
  if (name.size() > max_path_name_bytes)
    return fmt::format("is {} bytes long, more than {}: it is part of file and folder names", name.size(),
                       max_path_name_bytes);
  return {};
}

void check_name(const toml::source_region& at, const std::string& context, std::string_view what, std::string_view name,
                name_use use) {
  if (const std::string why = name_problem(name, use); !why.empty())
    fail_at(at, fmt::format("{}: {} '{}' {}", context, what, nb::printable_bounded(name, 80), why));
}

std::vector<std::uint16_t> parse_ports(const toml_reader& r, const toml::node& n) {
  if (n.is_string()) {  // "11256-11263", as netserve's -p takes
    const std::string s = n.as_string()->get();
    try {
      return nb::parse_port_spec(s);
    } catch (const std::invalid_argument& e) {
      fail_at(n.source(), fmt::format("{}: 'ports' '{}' is not a port list like \"11256-11263\" or \"11256,11300\": {}",
                                      r.context(), s, e.what()));
    }
  }
  std::vector<std::uint16_t> out;
  for (const toml::node& e : r.array(n, "ports"))
    out.push_back(static_cast<std::uint16_t>(r.integer(e, "ports", 0, 65535)));
  if (out.empty()) fail_at(n.source(), fmt::format("{}: 'ports' is empty", r.context()));
  return out;
}

namespace {

void parse_defaults(plan& p, const toml::table& t) {
  toml_reader r(t, "defaults");
  p.duration = r.number_or("duration", p.duration, 0.1, 86400);
  p.warmup = r.number_or("warmup", p.warmup, 0, 86400);
  p.repeats = static_cast<int>(r.integer_or("repeats", p.repeats, 1, 1000));
  p.lead = r.number_or("lead", p.lead, 0.1, nb::max_start_lead_s);  // netserve refuses a start further ahead
  p.interval = r.number_or("interval", p.interval, 0.1, 60);
  p.skew_bound_ms = r.number_or("skew_bound_ms", p.skew_bound_ms, 0.1, 60000);
  p.settle = r.number_or("settle", p.settle, 0, 600);
  if (const toml::node* n = r.find("ports")) {
    p.ports = parse_ports(r, *n);
    p.ports_where = where(n->source());
  }
  r.done();
  if (p.warmup >= p.duration)
    fail_at(t.source(), fmt::format("defaults: warmup {} s leaves nothing of a {} s test", p.warmup, p.duration));
}

launcher_kind parse_launcher(const toml_reader& r, const toml::node& n) {
  const std::string s = r.string(n, "launcher");
  if (const auto k = launcher_named(s)) return *k;
  fail_at(n.source(), fmt::format("{}: launcher '{}' is not one of local, ssh, netns", r.context(), s));
}

// A key for another launcher (identity on a local host) is probably not what the author thinks.
void only_for(toml_reader& r, const host& h, launcher_kind k, std::initializer_list<const char*> keys) {
  if (h.launcher == k) return;
  for (const char* key : keys)
    if (const toml::node* n = r.find(key))
      fail_at(n->source(), fmt::format("{}: '{}' only applies to launcher '{}'", r.context(), key, to_string(k)));
}

// As the kernel's dev_valid_name.
bool interface_name(const std::string& s) {
  return !s.empty() && s.size() <= 15 && s != "." && s != ".." && s.find_first_of("/: \t\n'\"") == std::string::npos;
}

// The XDP keys without engine = "xdp" are an error, as netserve's options are.
void parse_engine(toml_reader& r, host& h) {
  if (const toml::node* n = r.find("engine")) {
    const std::string name = r.string(*n, "engine");
    const auto engine = nb::parse_receive_engine(name);
    if (!engine) fail_at(n->source(), fmt::format("{}: engine '{}' is not socket or xdp", r.context(), name));
    h.engine = *engine;
  }
  if (h.engine != nb::receive_engine::xdp) {
    for (const char* key : {"interface", "xdp_pass", "xdp_mode"})
      if (const toml::node* k = r.find(key))
        fail_at(k->source(), fmt::format("{}: '{}' only applies with engine = \"xdp\"", r.context(), key));
    return;
  }
  const toml::node& i = r.need("interface");
  h.interface = r.string(i, "interface");
  if (!interface_name(h.interface))
    fail_at(i.source(), fmt::format("{}: interface '{}' is not an interface name", r.context(), h.interface));
  h.xdp_pass = r.boolean_or("xdp_pass", false);
  if (const toml::node* m = r.find("xdp_mode")) {
    h.xdp_mode = r.string(*m, "xdp_mode");
    if (h.xdp_mode != "auto" && h.xdp_mode != "native" && h.xdp_mode != "generic")
      fail_at(m->source(), fmt::format("{}: xdp_mode '{}' is not auto, native or generic", r.context(), h.xdp_mode));
  }
}

// A stock server is not started: netserve's keys do not apply.
void parse_peer(toml_reader& r, host& h) {
  const toml::node* n = r.find("peer");
  if (!n) return;
  h.peer = r.string(*n, "peer");
  if (h.peer != "netserve" && h.peer != "iperf3" && h.peer != "netserver")
    fail_at(n->source(), fmt::format("{}: peer '{}' is not netserve, iperf3 or netserver", r.context(), h.peer));
  if (h.stock_peer() && h.engine != nb::receive_engine::socket)
    fail_at(n->source(), fmt::format("{}: peer '{}' runs no netserve: 'engine' does not apply", r.context(), h.peer));
}

host parse_host(const std::string& name, const toml::table& t) {
  toml_reader r(t, fmt::format("host '{}'", name));
  host h;
  h.name = name;
  const toml::node& a = r.need("address");
  h.address = r.string(a, "address");
  if (h.address.empty() || h.address.find_first_of(" \t\n'\"") != std::string::npos)
    fail_at(a.source(), fmt::format("{}: address '{}' is not a host address", r.context(), h.address));
  if (const toml::node* n = r.find("launcher")) h.launcher = parse_launcher(r, *n);
  h.bin_dir = r.string_or("bin_dir", "");
  h.psk_file = r.string_or("psk_file", "");
  parse_engine(r, h);
  parse_peer(r, h);
  only_for(r, h, launcher_kind::ssh, {"user", "ssh_port", "identity", "ssh_options", "connect_timeout"});
  only_for(r, h, launcher_kind::netns, {"namespace"});
  if (h.launcher == launcher_kind::ssh) {
    h.ssh.user = r.string_or("user", "");
    h.ssh.port = static_cast<std::uint16_t>(r.integer_or("ssh_port", 0, 1, 65535));
    h.ssh.identity = r.string_or("identity", "");
    h.ssh.connect_timeout = static_cast<int>(r.integer_or("connect_timeout", 5, 1, 300));
    if (const toml::node* n = r.find("ssh_options"))
      for (const toml::node& e : r.array(*n, "ssh_options")) h.ssh.options.push_back(r.string(e, "ssh_options"));
  }
  if (h.launcher == launcher_kind::netns) h.netns = r.string(r.need("namespace"), "namespace");
  r.done();
  return h;
}

}  // namespace

const char* to_string(launcher_kind k) { return name_of(launcher_names, k); }
const char* to_string(topology t) { return name_of(topology_names, t); }
std::optional<launcher_kind> launcher_named(std::string_view name) { return value_of(launcher_names, name); }
std::optional<topology> topology_named(std::string_view name) { return value_of(topology_names, name); }

std::string load_level::label() const {
  if (pps) return fmt::format("p{:g}", *pps);
  if (rate) return "r" + *rate;
  return {};
}

std::string host_ref(const plan& p, const toml_reader& r, const toml::node& n, const char* key) {
  std::string name = r.string(n, key);
  if (!p.hosts.count(name)) fail_at(n.source(), fmt::format("{}: unknown host '{}'", r.context(), name));
  return name;
}

plan parse_plan(const std::string& text, const std::string& source_path) {
  const toml::table root = parse_toml_bounded<plan_error>(text, source_path);
  plan p;
  p.source_path = source_path;
  p.source_text = text;
  toml_reader r(root, "plan");
  const auto stem = source_path.substr(source_path.find_last_of('/') + 1);
  if (const toml::node* n = r.find("name")) {
    p.name = r.string(*n, "name");
    check_name(n->source(), "plan", "name", p.name, name_use::path);
  } else {
    p.name = stem.substr(0, stem.rfind(".toml"));
    if (const std::string why = name_problem(p.name, name_use::path); !why.empty())
      throw plan_error(
          fmt::format("{}: plan: its name (the file's name, as the plan gives no 'name') {}; give a "
                      "'name'",
                      source_path, why));
  }
  if (const toml::node* d = r.find("defaults")) parse_defaults(p, r.table(*d, "defaults"));
  for (const auto& [key, value] : r.table(r.need("hosts"), "hosts")) {
    check_name(key.source(), "hosts", "host name", key.str(), name_use::path);
    p.hosts.emplace(std::string(key.str()), parse_host(std::string(key.str()), r.table(value, "hosts")));
  }
  if (const toml::node* g = r.find("groups")) {
    toml_reader gr(r.table(*g, "groups"), "groups");
    for (const auto& [key, value] : r.table(*g, "groups")) {
      const std::string name(key.str());
      check_name(key.source(), "groups", "group name", name, name_use::text);
      if (p.hosts.count(name)) fail_at(key.source(), fmt::format("groups: '{}' is already a host name", name));
      auto& members = p.groups[name];
      for (const toml::node& e : gr.array(value, name.c_str())) members.push_back(host_ref(p, gr, e, name.c_str()));
    }
  }
  parse_tests(p, r.need("tests"));
  p.has_lab = r.find("lab") != nullptr;  // checked by `harness lab`, counted by runs
  r.done();
  return p;
}

plan load_plan(const std::string& path) { return parse_plan(read_file_text<plan_error>(path, "the plan file"), path); }

}  // namespace harness
