// The /proc parsers on fixed text as kernels print it, and the delta of two snapshots.
#include "core/host/host_stats.hpp"

#include <catch2/catch.hpp>

using namespace nb;
using nlohmann::json;

namespace {

// Kernel 6.x, two CPUs (user nice system idle iowait irq softirq steal guest guest_nice).
constexpr const char* stat_before =
    "cpu  70750 0 7339 34255 463 0 255 749 0 0\n"
    "cpu0 34360 0 3506 18607 43 0 70 335 0 0\n"
    "cpu1 36390 0 3833 15648 419 0 184 414 0 0\n"
    "intr 354955 0 0 0\n"
    "ctxt 374801\n"
    "btime 1700000000\n";
// 200 ticks later on each CPU: cpu0 user 50 + nice 10, system 40, idle 60 + iowait 20, irq 4, softirq 16;
// cpu1 softirq 186, system 10, idle 4.
constexpr const char* stat_after =
    "cpu  70760 10 7389 34335 487 4 457 749 0 0\n"
    "cpu0 34410 10 3546 18667 63 4 86 335 0 0\n"
    "cpu1 36390 0 3843 15652 419 0 370 414 0 0\n"
    "intr 354999 0 0 0\n";

constexpr const char* softnet_before =
    "fffffff0 00000002 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
    "000003ed 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000000\n";
// Row 0's processed wrapped past 2^32: 0xfffffff0 -> 0x10 is 0x20 = 32 more.
constexpr const char* softnet_after =
    "00000010 00000005 00000004 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
    "000013ed 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000000\n";

constexpr const char* snmp_text =
    "Ip: Forwarding DefaultTTL InReceives\n"
    "Ip: 1 64 1000\n"
    "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
    "Udp: 5000000000 3 120 27 100 7 0 0 0\n"
    "UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
    "UdpLite: 9 9 9 9 9 9 9 9 9\n";

constexpr const char* snmp6_text =
    "Ip6InReceives                   \t10\n"
    "Udp6InDatagrams                 \t40\n"
    "Udp6NoPorts                     \t1\n"
    "Udp6InErrors                    \t2\n"
    "Udp6RcvbufErrors                \t2\n"
    "Udp6SndbufErrors                \t0\n"
    "UdpLite6InDatagrams             \t99\n";

constexpr const char* dev_text =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
    "    lo:    3267      29    0    0    0     0          0         0     3267      29    0    0    0     0       0          0\n"
    "  eth0: 31596266     987    0    5    0     0          0         0    47696     618    0    2    0     0       0          0\n"
    "ens1f0:1234567890 4294967296 0 7 0 0 0 0 1 1 0 0 0 0 0 0\n";

host_snapshot snapshot(const char* stat, const char* softnet, std::int64_t mono, std::int64_t cpu_ns) {
  host_snapshot s;
  s.mono_ns = mono;
  s.wall_ns = 1'700'000'000'000'000'000 + mono;
  s.process_cpu_ns = cpu_ns;
  s.cpus = parse_proc_stat(stat);
  s.softnet = parse_softnet_stat(softnet);
  return s;
}

}  // namespace

TEST_CASE("/proc/stat: per-CPU ticks folded into user - system - softirq - irq - idle - steal", "[host]") {
  auto cpus = parse_proc_stat(stat_before);
  REQUIRE(cpus.size() == 2);  // the "cpu" total line is not a CPU
  CHECK(cpus[1].cpu == 1);
  CHECK(cpus[1].user == 36390);
  CHECK(cpus[1].system == 3833);
  CHECK(cpus[1].idle == 15648 + 419);
  CHECK(cpus[1].softirq == 184);
  CHECK(cpus[1].steal == 414);
  // An old kernel's four columns: the rest count as 0.
  auto old = parse_proc_stat("cpu0 1 2 3 4\n");
  CHECK(old[0].user == 3);
  CHECK(old[0].idle == 4);
  CHECK_THROWS_WITH(parse_proc_stat("cpu0 1 x 3 4\n"), Catch::Contains("/proc/stat: line 1"));
  CHECK_THROWS_AS(parse_proc_stat("intr 1 2\n"), std::runtime_error);
}

TEST_CASE("/proc/net/softnet_stat - /proc/net/snmp(6) - /proc/net/dev", "[host]") {
  auto rows = parse_softnet_stat(softnet_before);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].processed == 0xfffffff0u);
  CHECK(rows[0].dropped == 2);
  CHECK(rows[0].time_squeeze == 1);
  CHECK_THROWS_AS(parse_softnet_stat("0000000g 0 0\n"), std::runtime_error);

  auto udp = parse_snmp_udp(snmp_text);  // Udp, not UdpLite; 64-bit values
  CHECK(udp.in_datagrams == 5'000'000'000ULL);
  CHECK(udp.no_ports == 3);
  CHECK(udp.in_errors == 120);
  CHECK(udp.rcvbuf_errors == 100);
  CHECK(udp.sndbuf_errors == 7);
  add_snmp6_udp(snmp6_text, udp);
  CHECK(udp.in_datagrams == 5'000'000'040ULL);
  CHECK(udp.rcvbuf_errors == 102);
  CHECK_THROWS_AS(parse_snmp_udp("Udp: InDatagrams NoPorts\nUdp: 1\n"), std::runtime_error);

  auto dev = parse_net_dev(dev_text);
  REQUIRE(dev.size() == 3);
  CHECK(dev[1].name == "eth0");
  CHECK(dev[1].rx_packets == 987);
  CHECK(dev[1].rx_dropped == 5);
  CHECK(dev[1].tx_packets == 618);
  CHECK(dev[1].tx_dropped == 2);
  CHECK(dev[2].name == "ens1f0");  // name glued to the first number, as old kernels print it
  CHECK(dev[2].rx_packets == 4'294'967'296ULL);
  CHECK(dev[2].rx_dropped == 7);
  CHECK_THROWS_AS(parse_net_dev("h\nh\neth0: 1 2 3\n"), std::runtime_error);
}

TEST_CASE("the delta: CPU shares - process CPU - a 32-bit softnet wrap - interfaces that moved", "[host]") {
  auto a = snapshot(stat_before, softnet_before, 1'000'000'000, 100'000'000);
  auto b = snapshot(stat_after, softnet_after, 3'000'000'000, 1'900'000'000);
  a.udp = parse_snmp_udp(snmp_text);
  b.udp = a.udp;
  b.udp.rcvbuf_errors += 40;
  a.interfaces = parse_net_dev(dev_text);
  b.interfaces = a.interfaces;
  b.interfaces[1].rx_dropped += 3;                 // eth0 moved
  b.interfaces.push_back({"veth9", 10, 0, 0, 0});  // appeared during the window: counted from 0
  b.interfaces[2].rx_packets = 1;                  // ens1f0 went backwards (recreated): 0, not listed
  auto d = host_delta_between(a, b);

  CHECK(d.window_s == Approx(2.0));
  CHECK(d.start_ns == a.wall_ns);
  CHECK(d.process_cpu_s == Approx(1.8));
  CHECK(d.process_cpu_pct == Approx(90.0));
  CHECK(d.cpus == 2);
  REQUIRE(d.per_cpu.size() == 2);
  const cpu_share& c0 = d.per_cpu[0];
  CHECK(c0.user_pct == Approx(30.0));  // (50 + 10) / 200
  CHECK(c0.system_pct == Approx(20.0));
  CHECK(c0.idle_pct == Approx(40.0));
  CHECK(c0.irq_pct == Approx(2.0));
  CHECK(c0.softirq_pct == Approx(8.0));
  CHECK(d.per_cpu[1].softirq_pct == Approx(93.0));
  CHECK(d.busiest()->cpu == 1);
  CHECK(d.busiest()->busy_pct() == Approx(98.0));
  CHECK(d.all.softirq_pct == Approx(50.5));  // (16 + 186) / 400
  CHECK(d.all.idle_pct == Approx(21.0));

  CHECK(d.softnet_processed == 32 + 0x1000);
  CHECK(d.softnet_dropped == 3 + 1);
  CHECK(d.softnet_time_squeeze == 3);
  CHECK(d.udp.rcvbuf_errors == 40);
  CHECK(d.udp.in_datagrams == 0);
  REQUIRE(d.interfaces.size() == 2);
  CHECK(d.interfaces[0].name == "eth0");
  CHECK(d.interfaces[0].rx_dropped == 3);
  CHECK(d.interfaces[1].name == "veth9");
  CHECK(d.interfaces[1].rx_packets == 10);
  CHECK(d.rx_dropped() == 3);
}

TEST_CASE("a big host's delta lists its busiest CPUs and stays within a control frame", "[host]") {
  host_snapshot a, b;
  b.mono_ns = 1'000'000'000;
  for (int i = 0; i < 256; ++i) {
    a.cpus.push_back({i, 0, 0, 0, 0, 0, 0});
    b.cpus.push_back({i, static_cast<std::uint64_t>(i), 0, 0, 0, static_cast<std::uint64_t>(300 - i), 0});
  }
  for (int i = 0; i < 100; ++i) b.interfaces.push_back({"veth" + std::to_string(i), 1, i == 42 ? 9u : 0u, 1, 0});
  auto d = host_delta_between(a, b);
  CHECK(d.cpus == 256);
  REQUIRE(d.per_cpu.size() == max_listed_cpus);
  CHECK(d.per_cpu.front().cpu == 256 - static_cast<int>(max_listed_cpus));
  CHECK(d.busiest()->cpu == 255);
  CHECK(d.interfaces.size() == max_listed_interfaces);
  CHECK(d.rx_dropped() == 9);  // the interface that dropped is always kept
  CHECK(to_json(d).dump().size() < 16 * 1024);
}

TEST_CASE("host delta JSON round-trips and is read strictly", "[host]") {
  auto d = host_delta_between(snapshot(stat_before, softnet_before, 0, 0),
                              snapshot(stat_after, softnet_after, 2'000'000'000, 0));
  d.interfaces.push_back({"eth0", 1, 2, 3, 4});
  json j = to_json(d);
  CHECK(j["cpu"]["per_cpu"][1]["cpu"] == 1);
  CHECK(j["cpu"]["per_cpu"][1]["softirq_pct"] == 93.0);
  CHECK(j["process"].contains("cpu_pct"));
  CHECK(j["softnet"]["processed"] == 32 + 0x1000);
  auto back = host_delta_from_json(j);
  CHECK(to_json(back) == j);

  auto fails = [&](json bad, const std::string& text) {
    CHECK_THROWS_WITH(host_delta_from_json(bad), Catch::Contains(text));
  };
  json x = j;
  x["extra"] = 1;
  fails(x, "'extra' is not a known field");
  x = j;
  x["cpu"]["per_cpu"][0]["idle_pct"] = 140.0;
  fails(x, "must be a percentage");
  x = j;
  x["interfaces"][0]["name"] = "a-name-far-too-long";
  fails(x, "not an interface name");
  x = j;
  for (int i = 0; i < 40; ++i) x["interfaces"].push_back(j["interfaces"][0]);
  fails(x, "too many entries");
  x = j;
  x["softnet"].erase("dropped");
  fails(x, "'dropped' is missing");
}
