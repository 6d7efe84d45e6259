#pragma once
// What `harness check` needs to know of a host before a test, read there by our own program (`netload
// --host-info`), so a host needs nothing else installed: the version, CPUs, kernel, the data-plane
// features its kernel offers (core/sys/kernel_features.hpp) and the MTU of the path to each peer; then its
// wall clock, once per line read, for an NTP-style offset estimate over the ssh channel.
// Errors: a peer whose MTU cannot be read is reported in the facts ("error"), never thrown; a failed
// write of the reply is an exception (the harness went away).
#include "core/sys/endpoint.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace nb {

// {"type":"host_info", "version", "cpus" (online), "cpus_allowed" (this process may run on), "kernel"
// ("Linux 6.1.0-13-amd64 x86_64"), "features": {"gso": true, ...}, "mtu": {PEER: {"mtu": 1500, "dev":
// "eth0"} or {"error": "..."}}}.
nlohmann::json host_facts(const std::vector<std::string>& peers);

// The MTU of the route to `peer` (a name or numeric address), and the device it leaves by: the kernel's
// own answer (IP_MTU / IPV6_MTU on a connected UDP socket; connect sends nothing).
nlohmann::json path_mtu(const std::string& peer);

// Whether `address` is this host's own, in this network namespace: loopback, or held by one of its
// interfaces (getifaddrs). Traffic to it never leaves the host: the kernel loops it back, and the two
// ends' TCP work shares this host's CPUs.
bool held_by_this_host(const endpoint& address);

// The clock service: for every line read on `in` (a file descriptor), one line "clock WALL_NS" on `out`,
// flushed; ends at end of file, after max_replies, or when nothing comes for idle_ms. Returns the
// replies given.
int serve_clock(int in, std::FILE* out, int max_replies = 64, int idle_ms = 10'000);

// The harness's side reads "clock WALL_NS" back: the number, or -1 for any other line.
long long parse_clock_reply(const std::string& line);

}  // namespace nb
