#pragma once
// What `harness check` reads of a host by `netload --host-info`, so a host needs nothing else installed;
// then its wall clock, for an NTP-style offset estimate over the ssh channel.
#include "core/sys/endpoint.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace nb {

// A peer whose MTU cannot be read gets {"error": ...} in "mtu", never an exception.
nlohmann::json host_facts(const std::vector<std::string>& peers);

// IP_MTU / IPV6_MTU on a connected UDP socket: connect sends nothing.
nlohmann::json path_mtu(const std::string& peer);

// Traffic to such an address never leaves the host: both ends' work shares its CPUs.
bool held_by_this_host(const endpoint& address);

// "clock WALL_NS" for every line read on `in`, until end of file, max_replies or idle_ms of nothing.
// A failed write throws: the harness went away.
int serve_clock(int in, std::FILE* out, int max_replies = 64, int idle_ms = 10'000);

// -1 for any other line.
long long parse_clock_reply(const std::string& line);

}  // namespace nb
