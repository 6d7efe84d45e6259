#pragma once
// What a host was doing during a test: two snapshots of the kernel's own counters (CPU time by kind,
// the softirq backlog, UDP, interfaces), taken at the test's start instant and at its end, and their
// difference. Read from /proc as this process sees it: CPU figures are the machine's, the network ones
// this network namespace's. Taken twice per test, never on the data plane.
#include <boost/describe/class.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nb {

// One "cpuN" line of /proc/stat, in clock ticks (USER_HZ).
struct cpu_jiffies {
  int cpu = 0;
  std::uint64_t user = 0;  // user + nice (guest time is already inside them)
  std::uint64_t system = 0;
  std::uint64_t softirq = 0;
  std::uint64_t irq = 0;
  std::uint64_t idle = 0;  // idle + iowait
  std::uint64_t steal = 0;
};

// One row of /proc/net/softnet_stat (one per online CPU): the kernel prints 32-bit counters.
struct softnet_row {
  std::uint32_t processed = 0;
  std::uint32_t dropped = 0;       // the per-CPU backlog was full (netdev_max_backlog)
  std::uint32_t time_squeeze = 0;  // the receive softirq ran out of budget or time with work left
};

// /proc/net/snmp "Udp:" plus /proc/net/snmp6 "Udp6*" where IPv6 exists: both families together.
struct udp_counters {
  std::uint64_t in_datagrams = 0;
  std::uint64_t no_ports = 0;
  std::uint64_t in_errors = 0;      // includes rcvbuf_errors
  std::uint64_t rcvbuf_errors = 0;  // a receiving socket's buffer was full
  std::uint64_t sndbuf_errors = 0;
};
// Its JSON fields, named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(udp_counters, (), (in_datagrams, no_ports, in_errors, rcvbuf_errors, sndbuf_errors))

// One line of /proc/net/dev. rx_dropped is the kernel's "drop" column: rx_dropped + rx_missed_errors,
// so a NIC ring overflow the driver reports as missed is in it.
struct interface_counters {
  std::string name;
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_dropped = 0;
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_dropped = 0;
};
// Its JSON fields, named as the members (core/json/json_fields.hpp).
BOOST_DESCRIBE_STRUCT(interface_counters, (), (name, rx_packets, rx_dropped, tx_packets, tx_dropped))

struct host_snapshot {
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;
  std::int64_t process_cpu_ns = 0;  // this process, every thread
  std::vector<cpu_jiffies> cpus;
  std::vector<softnet_row> softnet;
  udp_counters udp;
  std::vector<interface_counters> interfaces;
};

// Parsers of the files' text; they throw std::runtime_error naming the line when it is not what the
// kernel prints.
std::vector<cpu_jiffies> parse_proc_stat(std::string_view text);
std::vector<softnet_row> parse_softnet_stat(std::string_view text);
udp_counters parse_snmp_udp(std::string_view text);
void add_snmp6_udp(std::string_view text, udp_counters& into);
std::vector<interface_counters> parse_net_dev(std::string_view text);

// The start snapshot is taken this long before the start instant, not at it: there, every instance's
// reading of /proc would compete with its own senders for the CPUs (measured with eight ASan-built
// instances on two cores: all started 20-38 ms after the instant). 20 ms of idle in the window dilutes
// a 3-s test's CPU shares by under 1 %.
inline constexpr std::int64_t snapshot_lead_ns = 20'000'000;

// Reads the real files. Empty when a file every Linux has cannot be read or parsed (the test then just
// has no host figures); /proc/net/snmp6 is absent without IPv6 and is skipped then.
std::optional<host_snapshot> take_host_snapshot();

// Shares of CPU time over a window, percent (0.01 resolution: the ticks are coarser than that).
struct cpu_share {
  int cpu = -1;  // -1: every CPU together
  double user_pct = 0, system_pct = 0, softirq_pct = 0, irq_pct = 0, idle_pct = 0, steal_pct = 0;
  double busy_pct() const noexcept { return user_pct + system_pct + softirq_pct + irq_pct; }
};
// Its JSON fields, named as the members (core/json/json_fields.hpp); `cpu` travels apart, only when >= 0.
BOOST_DESCRIBE_STRUCT(cpu_share, (), (user_pct, system_pct, softirq_pct, irq_pct, idle_pct, steal_pct))

// At most so many CPUs (the busiest) and interfaces (those whose counters moved, drops first) are
// listed: the delta travels in one 64-KiB control frame whatever the host's size.
inline constexpr std::size_t max_listed_cpus = 64;
inline constexpr std::size_t max_listed_interfaces = 32;

struct host_delta {
  std::int64_t start_ns = 0, end_ns = 0;  // wall clock
  double window_s = 0;                    // monotonic
  std::uint32_t cpus = 0;                 // every CPU the host has online, listed or not
  cpu_share all;                          // averages over all CPUs
  std::vector<cpu_share> per_cpu;         // by CPU number
  double process_cpu_s = 0;
  double process_cpu_pct = 0;  // percent of one core, as top prints it
  int pinned_cpu = -1;         // where the test's data thread was pinned (-T); -1: not pinned
  std::uint64_t softnet_processed = 0, softnet_dropped = 0, softnet_time_squeeze = 0;
  udp_counters udp;
  std::vector<interface_counters> interfaces;  // by name

  // The listed CPU with the most busy time; nullptr when none is listed.
  const cpu_share* busiest() const noexcept;
  // The CPU the test's data thread ran on when it was pinned (and is listed), else the busiest: where
  // the sender or reader of this test was, not another program's CPU on a shared host.
  const cpu_share* own_cpu() const noexcept;
  std::uint64_t rx_dropped() const noexcept;  // over the listed interfaces
  std::uint64_t tx_dropped() const noexcept;
};

// from -> to; counters that went backwards (a CPU or interface that came and went) count as 0, and the
// 32-bit softnet columns are taken modulo 2^32, so one wrap during the window is counted right.
host_delta host_delta_between(const host_snapshot& from, const host_snapshot& to);

nlohmann::json to_json(const host_delta& d);
// Throws std::runtime_error naming the field; unknown fields are refused, lists are bounded.
host_delta host_delta_from_json(const nlohmann::json& j);

}  // namespace nb
