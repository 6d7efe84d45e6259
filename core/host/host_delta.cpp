#include "core/host/host_stats.hpp"

#include "core/json/json_fields.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace nb {
namespace {

using nlohmann::json;
using fields = json_fields<std::runtime_error>;

std::uint64_t since(std::uint64_t from, std::uint64_t to) noexcept { return to >= from ? to - from : 0; }
double hundredths(double v) noexcept { return std::round(v * 100) / 100; }

cpu_jiffies cpu_since(const cpu_jiffies& a, const cpu_jiffies& b) noexcept {
  return {b.cpu,
          since(a.user, b.user),
          since(a.system, b.system),
          since(a.softirq, b.softirq),
          since(a.irq, b.irq),
          since(a.idle, b.idle),
          since(a.steal, b.steal)};
}

cpu_share share_of(const cpu_jiffies& d, int cpu) noexcept {
  const double total = static_cast<double>(d.user + d.system + d.softirq + d.irq + d.idle + d.steal);
  cpu_share s;
  s.cpu = cpu;
  if (total == 0) return s;
  auto pct = [&](std::uint64_t v) { return hundredths(100.0 * static_cast<double>(v) / total); };
  s.user_pct = pct(d.user);
  s.system_pct = pct(d.system);
  s.softirq_pct = pct(d.softirq);
  s.irq_pct = pct(d.irq);
  s.idle_pct = pct(d.idle);
  s.steal_pct = pct(d.steal);
  return s;
}

void cpu_part(const host_snapshot& a, const host_snapshot& b, host_delta& d) {
  std::map<int, const cpu_jiffies*> before;
  for (const auto& c : a.cpus) before[c.cpu] = &c;
  cpu_jiffies sum;
  for (const auto& c : b.cpus) {
    auto it = before.find(c.cpu);
    if (it == before.end()) continue;  // came online during the window
    cpu_jiffies x = cpu_since(*it->second, c);
    sum = {-1,
           sum.user + x.user,
           sum.system + x.system,
           sum.softirq + x.softirq,
           sum.irq + x.irq,
           sum.idle + x.idle,
           sum.steal + x.steal};
    d.per_cpu.push_back(share_of(x, c.cpu));
  }
  d.cpus = static_cast<std::uint32_t>(d.per_cpu.size());
  d.all = share_of(sum, -1);
  std::stable_sort(d.per_cpu.begin(), d.per_cpu.end(),
                   [](const cpu_share& x, const cpu_share& y) { return x.busy_pct() > y.busy_pct(); });
  if (d.per_cpu.size() > max_listed_cpus) d.per_cpu.resize(max_listed_cpus);
  std::sort(d.per_cpu.begin(), d.per_cpu.end(), [](const cpu_share& x, const cpu_share& y) { return x.cpu < y.cpu; });
}

void network_part(const host_snapshot& a, const host_snapshot& b, host_delta& d) {
  // 32-bit columns: modulo 2^32 survives one wrap.
  for (std::size_t i = 0; i < std::min(a.softnet.size(), b.softnet.size()); ++i) {
    d.softnet_processed += static_cast<std::uint32_t>(b.softnet[i].processed - a.softnet[i].processed);
    d.softnet_dropped += static_cast<std::uint32_t>(b.softnet[i].dropped - a.softnet[i].dropped);
    d.softnet_time_squeeze += static_cast<std::uint32_t>(b.softnet[i].time_squeeze - a.softnet[i].time_squeeze);
  }
  d.udp = {since(a.udp.in_datagrams, b.udp.in_datagrams), since(a.udp.no_ports, b.udp.no_ports),
           since(a.udp.in_errors, b.udp.in_errors), since(a.udp.rcvbuf_errors, b.udp.rcvbuf_errors),
           since(a.udp.sndbuf_errors, b.udp.sndbuf_errors)};
  std::map<std::string, const interface_counters*> before;
  for (const auto& i : a.interfaces) before[i.name] = &i;
  for (const auto& i : b.interfaces) {
    static const interface_counters none;
    auto it = before.find(i.name);
    const interface_counters& f = it == before.end() ? none : *it->second;  // new: counted from 0
    interface_counters x{i.name, since(f.rx_packets, i.rx_packets), since(f.rx_dropped, i.rx_dropped),
                         since(f.tx_packets, i.tx_packets), since(f.tx_dropped, i.tx_dropped)};
    if (x.rx_packets || x.rx_dropped || x.tx_packets || x.tx_dropped) d.interfaces.push_back(std::move(x));
  }
  std::stable_sort(d.interfaces.begin(), d.interfaces.end(), [](const auto& x, const auto& y) {
    auto key = [](const interface_counters& c) {
      return std::pair(c.rx_dropped + c.tx_dropped, c.rx_packets + c.tx_packets);
    };
    return key(x) > key(y);
  });
  if (d.interfaces.size() > max_listed_interfaces) d.interfaces.resize(max_listed_interfaces);
  std::sort(d.interfaces.begin(), d.interfaces.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
}

}  // namespace

const cpu_share* host_delta::busiest() const noexcept {
  auto it = std::max_element(per_cpu.begin(), per_cpu.end(),
                             [](const cpu_share& x, const cpu_share& y) { return x.busy_pct() < y.busy_pct(); });
  return it == per_cpu.end() ? nullptr : &*it;
}

const cpu_share* host_delta::own_cpu() const noexcept {
  auto it = std::find_if(per_cpu.begin(), per_cpu.end(), [&](const cpu_share& c) { return c.cpu == pinned_cpu; });
  return it != per_cpu.end() ? &*it : busiest();  // pinned_cpu -1 matches no listed CPU
}

std::uint64_t host_delta::rx_dropped() const noexcept {
  std::uint64_t n = 0;
  for (const auto& i : interfaces) n += i.rx_dropped;
  return n;
}

std::uint64_t host_delta::tx_dropped() const noexcept {
  std::uint64_t n = 0;
  for (const auto& i : interfaces) n += i.tx_dropped;
  return n;
}

host_delta host_delta_between(const host_snapshot& from, const host_snapshot& to) {
  host_delta d;
  d.start_ns = from.wall_ns;
  d.end_ns = to.wall_ns;
  d.window_s = std::max(0.0, static_cast<double>(to.mono_ns - from.mono_ns) / 1e9);
  d.process_cpu_s = std::max(0.0, static_cast<double>(to.process_cpu_ns - from.process_cpu_ns) / 1e9);
  d.process_cpu_pct = d.window_s > 0 ? hundredths(100.0 * d.process_cpu_s / d.window_s) : 0;
  cpu_part(from, to, d);
  network_part(from, to, d);
  return d;
}

namespace {

json share_json(const cpu_share& s) {
  json j = write_described(s);
  if (s.cpu >= 0) j["cpu"] = s.cpu;
  return j;
}

// The caller reads the rest of the object.
cpu_share share_from(fields& f) {
  auto s = f.read_described<cpu_share>();
  boost::mp11::mp_for_each<boost::describe::describe_members<cpu_share, boost::describe::mod_public>>([&](auto m) {
    if (!(s.*m.pointer >= 0 && s.*m.pointer <= 100)) f.fail(m.name, "must be a percentage");
  });
  return s;
}

cpu_share per_cpu_from(const json& j) {
  fields f(j, "host.cpu.per_cpu");
  cpu_share s = share_from(f);
  s.cpu = f.get<std::int32_t>("cpu");
  if (s.cpu < 0) f.fail("cpu", "must be a CPU number");
  f.done();
  return s;
}

interface_counters interface_from(const json& j) {
  fields f(j, "host.interfaces");
  auto c = f.read_described<interface_counters>();
  if (c.name.empty() || c.name.size() > 15) f.fail("name", "is not an interface name");  // IFNAMSIZ - 1
  f.done();
  return c;
}

json bounded_list(fields& f, const char* name, std::size_t max) {
  json v = f.get<json>(name);
  if (!v.is_array()) f.fail(name, "must be an array");
  if (v.size() > max) f.fail(name, "lists too many entries");
  return v;
}

void cpu_from(const json& j, host_delta& d) {
  fields f(j, "host.cpu");
  d.all = share_from(f);
  for (const auto& c : bounded_list(f, "per_cpu", max_listed_cpus)) d.per_cpu.push_back(per_cpu_from(c));
  f.done();
}

void counters_from(const json& process, const json& softnet, const json& udp, host_delta& d) {
  fields p(process, "host.process");
  d.process_cpu_s = p.get<double>("cpu_s");
  d.process_cpu_pct = p.get<double>("cpu_pct");
  if (d.process_cpu_s < 0 || d.process_cpu_pct < 0) p.fail("cpu_s", "must not be negative");
  p.done();
  fields s(softnet, "host.softnet");
  d.softnet_processed = s.get<std::uint64_t>("processed");
  d.softnet_dropped = s.get<std::uint64_t>("dropped");
  d.softnet_time_squeeze = s.get<std::uint64_t>("time_squeeze");
  s.done();
  d.udp = fields::read_object<udp_counters>(udp, "host.udp");
}

}  // namespace

json to_json(const host_delta& d) {
  json cpu = share_json(d.all);
  cpu["per_cpu"] = json::array();
  for (const auto& c : d.per_cpu) cpu["per_cpu"].push_back(share_json(c));
  json ifs = json::array();
  for (const auto& i : d.interfaces) ifs.push_back(write_described(i));
  return {
      {"start_ns", d.start_ns},
      {"end_ns", d.end_ns},
      {"window_s", d.window_s},
      {"cpus", d.cpus},
      {"pinned_cpu", d.pinned_cpu},
      {"cpu", std::move(cpu)},
      {"process", {{"cpu_s", d.process_cpu_s}, {"cpu_pct", d.process_cpu_pct}}},
      {"softnet",
       {{"processed", d.softnet_processed}, {"dropped", d.softnet_dropped}, {"time_squeeze", d.softnet_time_squeeze}}},
      {"udp", write_described(d.udp)},
      {"interfaces", std::move(ifs)}};
}

host_delta host_delta_from_json(const json& j) {
  fields f(j, "host");
  host_delta d;
  d.start_ns = f.get<std::int64_t>("start_ns");
  d.end_ns = f.get<std::int64_t>("end_ns");
  d.window_s = f.get<double>("window_s");
  if (!(d.window_s >= 0)) f.fail("window_s", "must not be negative");
  d.cpus = f.get<std::uint32_t>("cpus");
  d.pinned_cpu = f.get_or<int>("pinned_cpu", -1);
  if (d.pinned_cpu < -1) f.fail("pinned_cpu", "must be a CPU number or -1");
  cpu_from(f.get<json>("cpu"), d);
  counters_from(f.get<json>("process"), f.get<json>("softnet"), f.get<json>("udp"), d);
  for (const auto& i : bounded_list(f, "interfaces", max_listed_interfaces)) d.interfaces.push_back(interface_from(i));
  f.done();
  return d;
}

}  // namespace nb
