// The parsers take the files' text, so tests feed them fixed samples.
#include "core/host/host_stats.hpp"

#include "core/base/clock.hpp"
#include "core/base/fd.hpp"
#include "core/sys/eintr.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <charconv>
#include <map>
#include <stdexcept>

namespace nb {
namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return lines;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

[[noreturn]] void bad_line(const char* file, std::size_t line_no, std::string_view line) {
  throw std::runtime_error(fmt::format("{}: line {} is not what the kernel prints: '{}'", file, line_no + 1, line));
}

template <class T>
bool number(std::string_view s, T& out, int base = 10) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && end == s.data() + s.size();
}

// Kernels before 2.6.33 print fewer columns, which count as 0.
std::uint64_t column(const std::vector<std::string_view>& w, std::size_t i, std::size_t line_no,
                     std::string_view line) {
  std::uint64_t v = 0;
  if (i < w.size() && !number(w[i], v)) bad_line("/proc/stat", line_no, line);
  return v;
}

}  // namespace

std::vector<cpu_jiffies> parse_proc_stat(std::string_view text) {
  std::vector<cpu_jiffies> out;
  const auto lines = split_lines(text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    auto w = words(lines[n]);
    // "cpu" alone is the total: user nice system idle iowait irq softirq steal guest guest_nice.
    if (w.empty() || w[0].size() <= 3 || w[0].substr(0, 3) != "cpu") continue;
    cpu_jiffies c;
    if (!number(w[0].substr(3), c.cpu) || w.size() < 5) bad_line("/proc/stat", n, lines[n]);
    c.user = column(w, 1, n, lines[n]) + column(w, 2, n, lines[n]);
    c.system = column(w, 3, n, lines[n]);
    c.idle = column(w, 4, n, lines[n]) + column(w, 5, n, lines[n]);
    c.irq = column(w, 6, n, lines[n]);
    c.softirq = column(w, 7, n, lines[n]);
    c.steal = column(w, 8, n, lines[n]);
    out.push_back(c);
  }
  if (out.empty()) throw std::runtime_error("/proc/stat: no cpuN line");
  return out;
}

std::vector<softnet_row> parse_softnet_stat(std::string_view text) {
  std::vector<softnet_row> out;
  const auto lines = split_lines(text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    auto w = words(lines[n]);
    if (w.empty()) continue;
    softnet_row r;
    if (w.size() < 3 || !number(w[0], r.processed, 16) || !number(w[1], r.dropped, 16) ||
        !number(w[2], r.time_squeeze, 16))
      bad_line("/proc/net/softnet_stat", n, lines[n]);
    out.push_back(r);
  }
  return out;
}

udp_counters parse_snmp_udp(std::string_view text) {
  // Two lines per protocol: "Udp: Name Name ..." then "Udp: value value ...".
  const auto lines = split_lines(text);
  for (std::size_t n = 0; n + 1 < lines.size(); ++n) {
    auto names = words(lines[n]), values = words(lines[n + 1]);
    if (names.empty() || names[0] != "Udp:") continue;
    if (values.size() != names.size() || values[0] != "Udp:") bad_line("/proc/net/snmp", n + 1, lines[n + 1]);
    std::map<std::string_view, std::uint64_t> by_name;
    for (std::size_t i = 1; i < names.size(); ++i) {
      if (!number(values[i], by_name[names[i]])) bad_line("/proc/net/snmp", n + 1, lines[n + 1]);
    }
    return {by_name["InDatagrams"], by_name["NoPorts"], by_name["InErrors"], by_name["RcvbufErrors"],
            by_name["SndbufErrors"]};
  }
  throw std::runtime_error("/proc/net/snmp: no Udp lines");
}

void add_snmp6_udp(std::string_view text, udp_counters& into) {
  const std::map<std::string_view, std::uint64_t udp_counters::*> wanted = {
      {"Udp6InDatagrams", &udp_counters::in_datagrams},
      {"Udp6NoPorts", &udp_counters::no_ports},
      {"Udp6InErrors", &udp_counters::in_errors},
      {"Udp6RcvbufErrors", &udp_counters::rcvbuf_errors},
      {"Udp6SndbufErrors", &udp_counters::sndbuf_errors}};
  const auto lines = split_lines(text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    auto w = words(lines[n]);
    if (w.size() != 2) continue;
    auto it = wanted.find(w[0]);
    if (it == wanted.end()) continue;
    std::uint64_t v = 0;
    if (!number(w[1], v)) bad_line("/proc/net/snmp6", n, lines[n]);
    into.*(it->second) += v;
  }
}

std::vector<interface_counters> parse_net_dev(std::string_view text) {
  std::vector<interface_counters> out;
  const auto lines = split_lines(text);
  for (std::size_t n = 2; n < lines.size(); ++n) {  // two header lines
    if (words(lines[n]).empty()) continue;
    // Old kernels print "eth0:123": the name ends at the colon.
    auto colon = lines[n].find(':');
    if (colon == std::string_view::npos) bad_line("/proc/net/dev", n, lines[n]);
    auto name = words(lines[n].substr(0, colon));
    auto w = words(lines[n].substr(colon + 1));
    interface_counters c;
    if (name.size() != 1 || w.size() < 16 || !number(w[1], c.rx_packets) || !number(w[3], c.rx_dropped) ||
        !number(w[9], c.tx_packets) || !number(w[11], c.tx_dropped))
      bad_line("/proc/net/dev", n, lines[n]);
    c.name = std::string(name[0]);
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// Its size is unknown until read. Throws fmt::system_error naming it.
std::string read_proc_file(const char* path) {
  const fd_handle fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) throw fmt::system_error(errno, "cannot read {}", path);
  std::string text;
  char buf[16384];
  for (;;) {
    const ssize_t n = retry_eintr([&] { return ::read(fd.get(), buf, sizeof buf); });
    if (n < 0) throw fmt::system_error(errno, "cannot read {}", path);
    if (n == 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
  }
}

// /proc/net/snmp6 exists only where IPv6 does.
bool exists(const char* path) {
  if (::access(path, F_OK) == 0) return true;
  if (errno == ENOENT) return false;
  throw fmt::system_error(errno, "cannot read {}", path);
}

}  // namespace

std::optional<host_snapshot> take_host_snapshot() {
  try {
    host_snapshot s;
    s.mono_ns = mono_ns();
    s.wall_ns = wall_ns();
    s.process_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    s.cpus = parse_proc_stat(read_proc_file("/proc/stat"));
    s.softnet = parse_softnet_stat(read_proc_file("/proc/net/softnet_stat"));
    s.udp = parse_snmp_udp(read_proc_file("/proc/net/snmp"));
    if (exists("/proc/net/snmp6")) add_snmp6_udp(read_proc_file("/proc/net/snmp6"), s.udp);
    s.interfaces = parse_net_dev(read_proc_file("/proc/net/dev"));
    return s;
  } catch (const std::exception&) {
    return std::nullopt;  // the test itself goes on
  }
}

}  // namespace nb
