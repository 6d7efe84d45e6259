#pragma once
// `harness check` and the check before every run: per host, is it reachable, are our programs there and
// of the harness's version, what does it offer (CPUs, kernel, data-plane features, the path MTU to each
// peer), and how far is its wall clock from ours. netload runs a test "at one instant" (--start-at, the
// start barrier): that instant is only as good as the hosts' clocks agree.
//
// The clock offset is measured as NTP does, over the channel the harness already has to the host (ssh,
// or nothing for local and netns hosts): the harness notes its wall clock t1, asks, the host answers
// with its wall clock T, the harness notes t2. The host read T somewhere between t1 and t2, so
//   offset = T - (t1 + t2) / 2,   |error| <= (t2 - t1) / 2,
// whatever the delays each way. Of several exchanges the one with the shortest round trip has the
// tightest bound, and is the one kept.
#include "harness/plan/expand.hpp"
#include "harness/plan/plan.hpp"

#include <boost/describe/class.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace harness {

struct clock_reading {
  std::int64_t asked_ns = 0, host_ns = 0, answered_ns = 0;  // t1, T, t2
};

struct clock_offset {
  double offset_ms = 0;  // the host's clock minus the harness's: > 0 when the host's is ahead
  double bound_ms = 0;   // the offset is within +- this
  int exchanges = 0;
};
BOOST_DESCRIBE_STRUCT(clock_offset, (), (offset_ms, bound_ms, exchanges))

// NTP's estimate from the reading with the shortest round trip; nullopt when there is none, or a
// reading is inconsistent (answered before asked).
std::optional<clock_offset> estimate_offset(const std::vector<clock_reading>& readings);

// What is wrong with a `netload --host-info` line, std::nullopt when nothing: the type of every field the
// check reads, so an old or foreign program's line is an error naming the host, never an exception.
std::optional<std::string> facts_problem(const nlohmann::json& facts);

struct host_check {
  std::string host, address, launcher;
  bool reachable = false;
  std::string netload_version, netserve_version;  // netserve's only where the plan runs one there
  nlohmann::json facts;                           // `netload --host-info`'s line
  std::optional<clock_offset> clock;
  std::vector<std::string> errors;    // any one stops the run before a test starts
  std::vector<std::string> notes;     // said, not fatal
  std::vector<std::string> warnings;  // said louder, not fatal: a test's datagrams too large for a path
};
// Its JSON fields but the clock and the warnings (which older checks lack), named as the members.
BOOST_DESCRIBE_STRUCT(host_check, (),
                      (host, address, launcher, reachable, netload_version, netserve_version, facts, errors, notes))

// The rules: our programs of the harness's version; a clock no further off than the start-skew bound
// (with allow_offset that is a note: the start instant is corrected per host instead), a bound too wide
// to tell is a note; a data-plane feature the kernel lacks, and a path MTU under 1500, are notes.
void judge(host_check& c, double skew_bound_ms, bool allow_offset);

// The largest UDP payload a host sends to one peer address, and the test that sends it.
struct udp_payload {
  std::uint32_t bytes = 0;
  std::string test;
};
// Per host name, per peer address: the largest UDP payload it sends there (UDP_STREAM either way,
// UDP_RR requests and responses, latency probes).
std::map<std::string, std::map<std::string, udp_payload>> udp_payloads_per_host(const plan& p,
                                                                                const std::vector<run_spec>& runs);
// A warning for each payload that cannot cross the path MTU the host measured to that peer (with 28
// bytes of IPv4 and UDP headers, 48 of IPv6): netload sends with DF, so that run fails.
void judge_payloads(host_check& c, const std::map<std::string, udp_payload>& payloads);

// The table `harness check` prints and the report shows, one row per host, then its errors and notes.
std::string check_table(const std::vector<host_check>& checks);
nlohmann::json to_json(const host_check& c);
// Read back as to_json wrote it; throws std::runtime_error naming `context` (the file and host) and the
// field when a field is missing, of another type, or unknown.
host_check host_check_from_json(const nlohmann::json& j, const std::string& context = "host check");

// The addresses each host sends test data to, by host name: a client its servers, a server its clients
// only in reverse tests (in forward ones a client's plan address may be an ssh alias the server never uses).
std::map<std::string, std::set<std::string>> peers_per_host(const plan& p, const std::vector<run_spec>& runs);

}  // namespace harness
