#pragma once
// What a host was doing during a test: /proc's counters at its start and end, and their difference.
// CPU figures are the machine's, the network ones this network namespace's.
#include <boost/describe/class.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nb {

// In clock ticks (USER_HZ).
struct cpu_jiffies {
  int cpu = 0;
  std::uint64_t user = 0;  // user + nice (guest time is inside)
  std::uint64_t system = 0;
  std::uint64_t softirq = 0;
  std::uint64_t irq = 0;
  std::uint64_t idle = 0;  // idle + iowait
  std::uint64_t steal = 0;
};

// /proc/net/softnet_stat prints 32-bit counters.
struct softnet_row {
  std::uint32_t processed = 0;
  std::uint32_t dropped = 0;       // netdev_max_backlog was full
  std::uint32_t time_squeeze = 0;  // the softirq ran out of budget with work left
};

// Both families together: /proc/net/snmp and /proc/net/snmp6.
struct udp_counters {
  std::uint64_t in_datagrams = 0;
  std::uint64_t no_ports = 0;
  std::uint64_t in_errors = 0;  // includes rcvbuf_errors
  std::uint64_t rcvbuf_errors = 0;
  std::uint64_t sndbuf_errors = 0;
};
BOOST_DESCRIBE_STRUCT(udp_counters, (), (in_datagrams, no_ports, in_errors, rcvbuf_errors, sndbuf_errors))

// rx_dropped is /proc/net/dev's "drop": rx_missed_errors (a NIC ring overflow) included.
struct interface_counters {
  std::string name;
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_dropped = 0;
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_dropped = 0;
};
BOOST_DESCRIBE_STRUCT(interface_counters, (), (name, rx_packets, rx_dropped, tx_packets, tx_dropped))

struct host_snapshot {
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;
  std::int64_t process_cpu_ns = 0;  // every thread
  std::vector<cpu_jiffies> cpus;
  std::vector<softnet_row> softnet;
  udp_counters udp;
  std::vector<interface_counters> interfaces;
};

// Throw std::runtime_error naming a line the kernel would not print.
std::vector<cpu_jiffies> parse_proc_stat(std::string_view text);
std::vector<softnet_row> parse_softnet_stat(std::string_view text);
udp_counters parse_snmp_udp(std::string_view text);
void add_snmp6_udp(std::string_view text, udp_counters& into);
std::vector<interface_counters> parse_net_dev(std::string_view text);

// The start snapshot leads the start instant: at it, every instance's reading of /proc would compete with
// its own senders for the CPUs (bench/README.md#snapshot-lead).
inline constexpr std::int64_t snapshot_lead_ns = 20'000'000;

// Empty when a file every Linux has cannot be read: the test then has no host figures.
std::optional<host_snapshot> take_host_snapshot();

// Percent; 0.01 resolution, as the ticks are coarser.
struct cpu_share {
  int cpu = -1;  // -1: every CPU together
  double user_pct = 0, system_pct = 0, softirq_pct = 0, irq_pct = 0, idle_pct = 0, steal_pct = 0;
  double busy_pct() const noexcept { return user_pct + system_pct + softirq_pct + irq_pct; }
};
// `cpu` travels apart, only when >= 0.
BOOST_DESCRIBE_STRUCT(cpu_share, (), (user_pct, system_pct, softirq_pct, irq_pct, idle_pct, steal_pct))

// The busiest CPUs and the interfaces that moved: the delta fits one control frame on any host.
inline constexpr std::size_t max_listed_cpus = 64;
inline constexpr std::size_t max_listed_interfaces = 32;

struct host_delta {
  std::int64_t start_ns = 0, end_ns = 0;  // wall clock
  double window_s = 0;                    // monotonic
  std::uint32_t cpus = 0;                 // online, listed or not
  cpu_share all;
  std::vector<cpu_share> per_cpu;  // by CPU number
  double process_cpu_s = 0;
  double process_cpu_pct = 0;  // of one core, as top prints it
  int pinned_cpu = -1;         // -T; -1: not pinned
  std::uint64_t softnet_processed = 0, softnet_dropped = 0, softnet_time_squeeze = 0;
  udp_counters udp;
  std::vector<interface_counters> interfaces;  // by name

  const cpu_share* busiest() const noexcept;
  // The pinned CPU, else the busiest: not another program's CPU on a shared host.
  const cpu_share* own_cpu() const noexcept;
  std::uint64_t rx_dropped() const noexcept;  // over the listed interfaces
  std::uint64_t tx_dropped() const noexcept;
};

// Counters that went backwards (a CPU or interface that came and went) count as 0.
host_delta host_delta_between(const host_snapshot& from, const host_snapshot& to);

nlohmann::json to_json(const host_delta& d);
// Throws std::runtime_error naming the field; lists are bounded.
host_delta host_delta_from_json(const nlohmann::json& j);

}  // namespace nb
