#pragma once
// `harness check`: each host's reachability, programs, features and clock offset (the start barrier's skew).
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
  double offset_ms = 0;  // > 0 when the host's clock is ahead
  double bound_ms = 0;   // within +- this
  int exchanges = 0;
};
BOOST_DESCRIBE_STRUCT(clock_offset, (), (offset_ms, bound_ms, exchanges))

// NTP's: offset = T - (t1 + t2) / 2 within (t2 - t1) / 2, from the shortest round trip.
std::optional<clock_offset> estimate_offset(const std::vector<clock_reading>& readings);

// nullopt when a `netload --host-info` line is fine; a foreign line is an error, never an exception.
std::optional<std::string> facts_problem(const nlohmann::json& facts);

struct host_check {
  std::string host, address, launcher;
  bool reachable = false;
  std::string netload_version, netserve_version;  // netserve's only where the plan runs one
  nlohmann::json facts;                           // `netload --host-info`'s line
  std::optional<clock_offset> clock;
  std::vector<std::string> errors;  // any one stops the run
  std::vector<std::string> notes;
  std::vector<std::string> warnings;  // not fatal
};
// Without clock and warnings, which older checks lack.
BOOST_DESCRIBE_STRUCT(host_check, (),
                      (host, address, launcher, reachable, netload_version, netserve_version, facts, errors, notes))

// Clock off beyond the skew bound is an error (a note with allow_offset, which corrects it per host).
void judge(host_check& c, double skew_bound_ms, bool allow_offset);

struct udp_payload {
  std::uint32_t bytes = 0;
  std::string test;
};
// Per host, per peer address.
std::map<std::string, std::map<std::string, udp_payload>> udp_payloads_per_host(const plan& p,
                                                                                const std::vector<run_spec>& runs);
// Payloads over the path MTU less 28 bytes (48 on IPv6) warn: netload sends with DF.
void judge_payloads(host_check& c, const std::map<std::string, udp_payload>& payloads);

std::string check_table(const std::vector<host_check>& checks);
nlohmann::json to_json(const host_check& c);
// Throws naming `context` and the field when one is missing, mistyped or unknown.
host_check host_check_from_json(const nlohmann::json& j, const std::string& context = "host check");

// A server's peers only in reverse tests: a client's plan address may be an ssh alias.
std::map<std::string, std::set<std::string>> peers_per_host(const plan& p, const std::vector<run_spec>& runs);

}  // namespace harness
