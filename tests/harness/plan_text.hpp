#pragma once
// Plan text the harness tests share.
#include <string>

// A TCP test of one pair of hosts "a" and "b", both directions, MSS 1200: the plan test expands it, the
// loopback test runs it. `keys`: its message_size and whatever else the test wants, one key a line.
inline std::string tcp_pair_test(const std::string& name, const std::string& keys) {
  return "[[tests]]\nname = \"" + name + "\"\nkind = \"TCP_STREAM\"\n" + keys + R"(mss = 1200
topology = "pairs"
both_directions = true
pairs = [{ from = "a", to = "b", category = "OCI internal" }]
)";
}
