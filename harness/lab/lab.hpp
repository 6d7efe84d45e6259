#pragma once
// The lab: the Express Connect set-up emulated on one Linux box. The on-prem device and N cloud
// instances are network namespaces joined through a circuit namespace that routes between an on-prem
// link (device MTU) and a VPC bridge (VPC MTU), with the circuit's limits: bit rate (tc tbf) and packet
// rate (nftables limit), both directions. Everything lives in namespaces the lab owns, addressed from
// 198.18.0.0/15 (RFC 2544 benchmarking space) only, so a lab can never send to a real network.
#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace lab {

// Errors in the [lab] table name the place: "file:line:col: message".
struct lab_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ipv4_net {
  std::uint32_t address = 0;  // host byte order
  int prefix = 24;
};

struct lab_host {
  std::string role;       // "device" or "i1".."iN": names the veth in the circuit namespace
  std::string netns;      // namespace the host lives in
  std::uint32_t address;  // host byte order, inside its side's subnet
};

struct circuit_spec {
  std::optional<double> rate_bps;    // tbf, bits per second; none: no bit-rate limit
  std::optional<std::uint64_t> pps;  // nftables limit, packets per second per direction; none: no limit
  int mtu_onprem = 1500;
  int mtu_vpc = 1500;
};

struct lab_spec {
  std::string name;           // short: every interface name is derived from it
  std::string circuit_netns;  // "<name>-circuit" unless the file says otherwise
  ipv4_net onprem;            // gateway address (the circuit's) and prefix on the on-prem side
  ipv4_net vpc;               // gateway address and prefix on the VPC side
  lab_host device;
  std::vector<lab_host> instances;
  circuit_spec circuit;
  std::string source;  // the file it came from, for messages
};

// Reads the [lab] table (t is the table itself). Unknown keys, wrong types, addresses outside
// 198.18.0.0/15: lab_error with file:line:col.
lab_spec parse_lab(const toml::table& t, const std::string& file);
// Reads FILE and its [lab] table; any other top-level keys (a harness plan) are left to their owner.
lab_spec load_lab(const std::string& file);

// Creates what is missing and re-applies every setting; running it twice changes nothing.
void lab_up(const lab_spec& spec);
// Deletes the lab's namespaces (and with them every veth, bridge, qdisc and nft table inside them).
void lab_down(const lab_spec& spec);
// What exists: namespaces, links, qdiscs with their counters, nft counters. Without a spec: every lab
// circuit namespace found on this machine.
std::string lab_status(const lab_spec* spec);
// JSON: UDP datagrams delivered to each host (nft), forwarded / dropped per circuit direction (nft),
// bytes / packets / drops of each tbf.
std::string lab_counters(const lab_spec& spec);

// `lab up FILE`, `lab down FILE`, `lab status [FILE]`, `lab counters FILE`; args exclude the program
// name (the harness passes what follows "harness lab"). Returns the exit code; prints one-line errors.
int lab_main(std::vector<std::string> args);

std::string format_ipv4(std::uint32_t address);

}  // namespace lab
