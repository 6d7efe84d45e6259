#pragma once
// Express Connect emulated on one box: namespaces routed through a circuit namespace that limits bit and
// packet rate. Addresses from 198.18.0.0/15 (RFC 2544) only: a lab never reaches a real network.
#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace lab {

struct lab_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ipv4_net {
  std::uint32_t address = 0;  // host byte order
  int prefix = 24;
};

struct lab_host {
  std::string role;  // "device" or "i1".."iN"
  std::string netns;
  std::uint32_t address;  // host byte order
};

struct circuit_spec {
  std::optional<double> rate_bps;    // none: unlimited
  std::optional<std::uint64_t> pps;  // per direction; none: unlimited
  int mtu_onprem = 1500;
  int mtu_vpc = 1500;
};

struct lab_spec {
  std::string name;  // short: interface names derive from it
  std::string circuit_netns;
  ipv4_net onprem;  // the circuit's gateway address and prefix on that side
  ipv4_net vpc;
  lab_host device;
  std::vector<lab_host> instances;
  circuit_spec circuit;
  std::string source;  // for messages
};

// Unknown keys, wrong types, addresses outside 198.18.0.0/15: lab_error.
lab_spec parse_lab(const toml::table& t, const std::string& file);
// Other top-level keys (a harness plan's) are left to their owner.
lab_spec load_lab(const std::string& file);

// Idempotent: creates what is missing, re-applies every setting.
void lab_up(const lab_spec& spec);
// Deletes the namespaces, and with them all the lab made.
void lab_down(const lab_spec& spec);
// What exists; without a spec, every lab on this machine.
std::string lab_status(const lab_spec* spec);
// The nft and tbf counts as JSON, for tests.
std::string lab_counters(const lab_spec& spec);

// args: what follows "harness lab"; returns the exit code.
int lab_main(std::vector<std::string> args);

std::string format_ipv4(std::uint32_t address);

}  // namespace lab
