#include "harness/lab/lab.hpp"

#include "core/base/units.hpp"
#include "core/base/whole_number.hpp"
#include "harness/toml/toml_bounds.hpp"
#include "harness/toml/toml_reader.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>

#include <regex>
#include <set>

namespace lab {
namespace {

constexpr std::uint32_t bench_net = 0xC6120000;   // 198.18.0.0
constexpr std::uint32_t bench_mask = 0xFFFE0000;  // /15

using harness::where;
using reader = harness::basic_toml_reader<lab_error>;

[[noreturn]] void fail_at(const toml::node& n, const std::string& message) {
  throw lab_error(fmt::format("{}: {}", where(n.source()), message));
}

std::uint32_t parse_ipv4(const reader& r, const toml::node& n, const std::string& text, const char* key) {
  in_addr a{};
  if (inet_pton(AF_INET, text.c_str(), &a) != 1)
    fail_at(n, fmt::format("{}: '{}' = '{}' is not an IPv4 address", r.context(), key, text));
  const std::uint32_t v = ntohl(a.s_addr);
  if ((v & bench_mask) != bench_net)
    fail_at(n, fmt::format("{}: '{}' = '{}' is outside 198.18.0.0/15, the only range a lab may use", r.context(), key,
                           text));
  return v;
}

std::uint32_t mask_of(int prefix) { return prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix); }

// "198.18.0.1/24": the circuit's address on one side, and that side's subnet.
ipv4_net parse_gateway(reader& r, const char* key) {
  const toml::node& n = r.need(key);
  const std::string s = r.string(n, key);
  const auto slash = s.find('/');
  if (slash == std::string::npos)
    fail_at(n, fmt::format("{}: '{}' must be ADDRESS/PREFIX, e.g. 198.18.0.1/24", r.context(), key));
  ipv4_net net;
  net.address = parse_ipv4(r, n, s.substr(0, slash), key);
  const auto prefix = nb::parse_whole(std::string_view(s).substr(slash + 1), 15, 30);
  if (!prefix) fail_at(n, fmt::format("{}: '{}' prefix must be /15 to /30 (inside 198.18.0.0/15)", r.context(), key));
  net.prefix = *prefix;
  return net;
}

std::string parse_netns(const reader& r, const toml::node& n) {
  const std::string s = r.string(n, "namespace");
  static const std::regex ok("[A-Za-z0-9_.-]{1,48}");
  if (!std::regex_match(s, ok))
    fail_at(n, fmt::format("{}: namespace '{}' must be 1-48 of A-Z a-z 0-9 _ . -", r.context(), s));
  return s;
}

lab_host parse_host(const reader& parent, const toml::node& n, std::string role, const ipv4_net& side) {
  reader r(parent.table(n, role.c_str()), fmt::format("lab {}", role));
  lab_host h;
  h.role = std::move(role);
  h.netns = parse_netns(r, r.need("namespace"));
  const toml::node& a = r.need("address");
  h.address = parse_ipv4(r, a, r.string(a, "address"), "address");
  const std::uint32_t m = mask_of(side.prefix);
  if ((h.address & m) != (side.address & m) || h.address == side.address || (h.address & ~m) == 0 ||
      (h.address & ~m) == ~m)
    fail_at(a, fmt::format("{}: address {} is not a free host address in {}/{}", r.context(), format_ipv4(h.address),
                           format_ipv4(side.address & m), side.prefix));
  r.done();
  return h;
}

circuit_spec parse_circuit(const reader& parent, const toml::node& n) {
  reader r(parent.table(n, "circuit"), "lab circuit");
  circuit_spec c;
  if (const toml::node* x = r.find("rate")) {
    try {
      c.rate_bps = nb::parse_rate(r.string(*x, "rate"));
    } catch (const std::invalid_argument& e) {
      fail_at(*x, fmt::format("lab circuit: 'rate': {}", e.what()));
    }
    if (*c.rate_bps < 8000 || *c.rate_bps > 100e9) fail_at(*x, "lab circuit: 'rate' must be between 8k and 100G bit/s");
  }
  if (const toml::node* x = r.find("pps")) c.pps = static_cast<std::uint64_t>(r.integer(*x, "pps", 1, 100'000'000));
  if (const toml::node* x = r.find("mtu_onprem"))
    c.mtu_onprem = static_cast<int>(r.integer(*x, "mtu_onprem", 576, 9000));
  if (const toml::node* x = r.find("mtu_vpc")) c.mtu_vpc = static_cast<int>(r.integer(*x, "mtu_vpc", 576, 9000));
  r.done();
  return c;
}

void check_unique(const lab_spec& s, const toml::node& where_node) {
  std::set<std::string> names{s.circuit_netns, s.device.netns};
  std::set<std::uint32_t> addresses{s.device.address};
  for (const auto& h : s.instances)
    if (!names.insert(h.netns).second || !addresses.insert(h.address).second)
      fail_at(where_node,
              fmt::format("lab: namespace '{}' or address {} is used twice", h.netns, format_ipv4(h.address)));
  if (names.size() != s.instances.size() + 2) fail_at(where_node, "lab: the device and circuit namespaces must differ");
  const std::uint32_t m = mask_of(std::min(s.onprem.prefix, s.vpc.prefix));
  if ((s.onprem.address & m) == (s.vpc.address & m))
    fail_at(where_node, "lab: the on-prem and VPC subnets overlap: the circuit could not route between them");
}

}  // namespace

std::string format_ipv4(std::uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
}

lab_spec parse_lab(const toml::table& t, const std::string& file) {
  reader r(t, "lab");
  lab_spec s;
  s.source = file;
  const toml::node& name = r.need("name");
  s.name = r.string(name, "name");
  // "<name>-v64" stays under the kernel's 15 characters.
  static const std::regex ok("[a-z][a-z0-9]{0,7}");
  if (!std::regex_match(s.name, ok))
    fail_at(name, fmt::format("lab: name '{}' must be 1-8 of a-z 0-9, starting with a letter", s.name));
  const toml::node* cn = r.find("circuit_namespace");
  s.circuit_netns = cn ? parse_netns(r, *cn) : s.name + "-circuit";
  s.onprem = parse_gateway(r, "onprem_gateway");
  s.vpc = parse_gateway(r, "vpc_gateway");
  s.device = parse_host(r, r.need("device"), "device", s.onprem);
  const toml::node& inst = r.need("instances");
  if (!inst.is_array() || inst.as_array()->empty() || inst.as_array()->size() > 64)
    fail_at(inst, "lab: 'instances' must be an array of 1 to 64 { namespace, address } tables");
  for (const toml::node& e : *inst.as_array())
    s.instances.push_back(parse_host(r, e, fmt::format("i{}", s.instances.size() + 1), s.vpc));
  if (const toml::node* c = r.find("circuit")) s.circuit = parse_circuit(r, *c);
  r.done();
  check_unique(s, t);
  return s;
}

lab_spec load_lab(const std::string& file) {
  const toml::table root =
      harness::parse_toml_bounded<lab_error>(harness::read_file_text<lab_error>(file, "the file"), file);
  const toml::node* l = root.get("lab");
  if (!l || !l->is_table()) throw lab_error(fmt::format("{}: no [lab] table", file));
  return parse_lab(*l->as_table(), file);
}

}  // namespace lab
