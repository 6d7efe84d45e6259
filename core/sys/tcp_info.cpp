#include "core/sys/tcp_info.hpp"

#include "core/base/clock.hpp"
#include "core/json/json_fields.hpp"

#include <linux/tcp.h>   // glibc's struct tcp_info stops at tcpi_total_retrans
#include <netinet/in.h>  // IPPROTO_TCP
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace nb {
namespace {

using nlohmann::json;
using fields = json_fields<std::runtime_error>;

constexpr std::uint32_t infinite_ssthresh = 0x7fffffff;  // the kernel's TCP_INFINITE_SSTHRESH

double bits(std::uint64_t bytes_per_second) { return static_cast<double>(bytes_per_second) * 8.0; }

template <class T, class Get>
std::optional<T> sum_of(const std::vector<tcp_sample>& v, Get get) {
  std::optional<T> out;
  for (const tcp_sample& s : v)
    if (auto x = get(s)) out = out.value_or(T{}) + static_cast<T>(*x);
  return out;
}

template <class Get>
std::optional<double> mean_of(const std::vector<tcp_sample>& v, Get get) {
  double total = 0;
  std::size_t n = 0;
  for (const tcp_sample& s : v)
    if (auto x = get(s)) total += static_cast<double>(*x), ++n;
  if (n == 0) return std::nullopt;
  return total / static_cast<double>(n);
}

template <class Get, class Pick>
std::optional<std::uint32_t> pick_of(const std::vector<tcp_sample>& v, Get get, Pick pick) {
  std::optional<std::uint32_t> out;
  for (const tcp_sample& s : v)
    if (auto x = get(s)) out = out ? pick(*out, *x) : *x;
  return out;
}

// tcpi_total_retrans and tcpi_segs_out are 32-bit and wrap within a long fast test: modulo 2^32.
std::optional<std::uint64_t> grown(std::optional<std::uint64_t> now, const tcp_sample* before,
                                   std::optional<std::uint64_t> tcp_sample::*field) {
  if (!now) return std::nullopt;
  const std::uint64_t was = before && (before->*field) ? *(before->*field) : 0;
  return static_cast<std::uint32_t>(*now - was);
}

}  // namespace

tcp_sample tcp_sample_from(std::span<const std::byte> info) {
  tcp_info t{};
  const std::size_t len = std::min(info.size(), sizeof t);
  std::memcpy(&t, info.data(), len);
  tcp_sample s;
  s.at_ns = wall_ns();
  // A field counts when the kernel's struct reached its end.
#define NB_FILLED(field) (len >= offsetof(tcp_info, field) + sizeof(t.field))
  if (NB_FILLED(tcpi_snd_mss) && t.tcpi_snd_mss) s.snd_mss = t.tcpi_snd_mss;
  if (NB_FILLED(tcpi_pmtu)) s.pmtu = t.tcpi_pmtu;
  if (NB_FILLED(tcpi_rtt)) s.rtt_us = t.tcpi_rtt;
  if (NB_FILLED(tcpi_rttvar)) s.rttvar_us = t.tcpi_rttvar;
  if (NB_FILLED(tcpi_snd_ssthresh) && t.tcpi_snd_ssthresh < infinite_ssthresh)
    s.ssthresh_segments = t.tcpi_snd_ssthresh;
  if (NB_FILLED(tcpi_snd_cwnd) && s.snd_mss) s.cwnd_bytes = std::uint64_t{t.tcpi_snd_cwnd} * *s.snd_mss;
  if (NB_FILLED(tcpi_total_retrans)) s.retransmits = t.tcpi_total_retrans;
  if (NB_FILLED(tcpi_pacing_rate)) {
    s.pacing_unlimited = t.tcpi_pacing_rate == std::numeric_limits<std::uint64_t>::max();
    if (!s.pacing_unlimited) s.pacing_rate = bits(t.tcpi_pacing_rate);
  }
  if (NB_FILLED(tcpi_bytes_acked)) s.bytes_acked = t.tcpi_bytes_acked;
  if (NB_FILLED(tcpi_segs_out)) s.segs_out = t.tcpi_segs_out;
  if (NB_FILLED(tcpi_min_rtt)) s.min_rtt_us = t.tcpi_min_rtt;
  if (NB_FILLED(tcpi_delivery_rate)) {  // the app-limited bit came with it, in former padding
    s.delivery_rate = bits(t.tcpi_delivery_rate);
    s.delivery_rate_app_limited = t.tcpi_delivery_rate_app_limited != 0;
  }
  if (NB_FILLED(tcpi_busy_time)) s.busy_us = t.tcpi_busy_time;
  if (NB_FILLED(tcpi_rwnd_limited)) s.rwnd_limited_us = t.tcpi_rwnd_limited;
  if (NB_FILLED(tcpi_sndbuf_limited)) s.sndbuf_limited_us = t.tcpi_sndbuf_limited;
  if (NB_FILLED(tcpi_bytes_sent)) s.bytes_sent = t.tcpi_bytes_sent;
  if (NB_FILLED(tcpi_bytes_retrans)) s.bytes_retrans = t.tcpi_bytes_retrans;
#undef NB_FILLED
  return s;
}

std::optional<tcp_sample> read_tcp_sample(int fd, std::error_code& ec) {
  tcp_info t{};
  socklen_t len = sizeof t;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &t, &len) != 0) {
    ec.assign(errno, std::system_category());
    return std::nullopt;
  }
  ec.clear();
  return tcp_sample_from(std::as_bytes(std::span(&t, 1)).first(std::min<std::size_t>(len, sizeof t)));
}

std::vector<tcp_sample> read_tcp_samples(std::span<const int> fds) {
  std::vector<tcp_sample> out;
  for (int fd : fds) {
    std::error_code ec;
    out.push_back(read_tcp_sample(fd, ec).value_or(tcp_sample{}));
  }
  return out;
}

std::string congestion_of(int fd) {
  char name[32] = {};  // the kernel's TCP_CA_NAME_MAX is 16
  socklen_t len = sizeof name - 1;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return {};
  return std::string(name, ::strnlen(name, std::min<std::size_t>(len, sizeof name - 1)));
}

tcp_figures summarize(std::vector<tcp_sample> now, const std::vector<tcp_sample>& before) {
  tcp_figures t;
  std::optional<std::uint64_t> retrans, segs;
  for (std::size_t i = 0; i < now.size(); ++i) {
    const tcp_sample* was = i < before.size() ? &before[i] : nullptr;
    if (auto r = grown(now[i].retransmits, was, &tcp_sample::retransmits)) retrans = retrans.value_or(0) + *r;
    if (auto n = grown(now[i].segs_out, was, &tcp_sample::segs_out)) segs = segs.value_or(0) + *n;
  }
  t.retransmits = retrans;
  if (retrans && segs && *segs > 0)
    t.retransmit_percent = 100.0 * static_cast<double>(*retrans) / static_cast<double>(*segs);
  t.rtt_us = mean_of(now, [](const tcp_sample& s) { return s.rtt_us; });
  t.rtt_max_us = pick_of(
      now, [](const tcp_sample& s) { return s.rtt_us; }, [](auto a, auto b) { return std::max(a, b); });
  t.rttvar_us = mean_of(now, [](const tcp_sample& s) { return s.rttvar_us; });
  t.cwnd_bytes = sum_of<std::uint64_t>(now, [](const tcp_sample& s) { return s.cwnd_bytes; });
  t.pacing_rate = sum_of<double>(now, [](const tcp_sample& s) { return s.pacing_rate; });
  t.delivery_rate = sum_of<double>(now, [](const tcp_sample& s) { return s.delivery_rate; });
  auto smaller = [](auto a, auto b) { return std::min(a, b); };
  t.snd_mss = pick_of(
      now, [](const tcp_sample& s) { return s.snd_mss; }, smaller);
  t.pmtu = pick_of(
      now, [](const tcp_sample& s) { return s.pmtu; }, smaller);
  t.streams = std::move(now);
  return t;
}

json to_json(const std::vector<tcp_sample>& samples) {
  json a = json::array();
  for (const tcp_sample& s : samples) a.push_back(write_described(s));
  return a;
}

std::vector<tcp_sample> tcp_samples_from_json(const json& j) {
  if (!j.is_array()) throw std::runtime_error("tcp: field 'streams' must be an array");
  std::vector<tcp_sample> out;
  for (const json& s : j) out.push_back(fields::read_object<tcp_sample>(s, "tcp sample"));
  return out;
}

json to_json(const tcp_figures& t) {
  json j = write_described(static_cast<const tcp_summary&>(t));
  if (t.congestion) j["congestion"] = t.congestion->empty() ? json(nullptr) : json(*t.congestion);
  j["streams"] = to_json(t.streams);
  return j;
}

tcp_figures tcp_figures_from_json(const json& j) {
  fields f(j, "tcp");
  tcp_figures t;
  f.read_described(static_cast<tcp_summary&>(t));
  if (j.contains("congestion")) t.congestion = f.get<std::optional<std::string>>("congestion").value_or("");
  t.streams = tcp_samples_from_json(f.get<json>("streams"));
  f.done();
  return t;
}

}  // namespace nb
