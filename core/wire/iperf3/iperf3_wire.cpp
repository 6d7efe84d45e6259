#include "core/wire/iperf3/iperf3_wire.hpp"

#include "core/json/json_fields.hpp"
#include "core/json/json_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace nb::iperf3 {

namespace {

using json = nlohmann::json;

json parse_object(std::string_view text, std::string_view what) {
  if (text.size() > max_json_size)
    throw protocol_error(fmt::format("iperf3 {}: more than {} bytes", what, max_json_size));
  bool too_deep = false;
  json j = parse_json_bounded(text, max_json_depth, &too_deep);
  if (j.is_discarded())
    throw protocol_error(fmt::format("iperf3 {}: {}", what, too_deep ? "nested too deep" : "not JSON"));
  if (!j.is_object()) throw protocol_error(fmt::format("iperf3 {}: not a JSON object", what));
  return j;
}

// cJSON's values, as iperf3 writes and reads them: every number a double, so an integer field holds a
// whole one within its range; a flag is a present key whatever its value (cJSON_AddTrueToObject, or 1).
struct cjson_values {
  template <class T>
  static constexpr bool reads = std::is_arithmetic_v<T>;

  template <class T, class Fields>
  static T read(const json& v, const Fields& f, const char* name) {
    if constexpr (std::is_same_v<T, bool>) {
      return true;
    } else {
      if (!v.is_number()) f.fail(name, "must be a number");
      if constexpr (std::is_floating_point_v<T>) {
        const double d = v.get<double>();
        if (!std::isfinite(d)) f.fail(name, "must be finite");
        return static_cast<T>(d);
      } else {
        return whole<T>(v, f, name);
      }
    }
  }

  template <class T, class Fields>
  static T whole(const json& v, const Fields& f, const char* name) {
    using limits = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(limits::max())) f.fail(name, "is out of range");
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
      const auto i = v.get<std::int64_t>();
      if (i < static_cast<std::int64_t>(limits::min()) ||
          (i > 0 && static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(limits::max())))
        f.fail(name, "is out of range");
      return static_cast<T>(i);
    }
    const double d = v.get<double>();
    // 2^63 and 2^64 are exact doubles: the bounds below hold for the conversion.
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(limits::min()) ||
        d >= std::ldexp(1.0, limits::digits))
      f.fail(name, "must be a whole number in range");
    return static_cast<T>(d);
  }
};

using cjson_fields = json_fields<protocol_error, cjson_values>;

// A count where -1 means unknown: iperf3's cJSON prints integers unsigned, so -1 arrives as 2^64 - 1.
std::int64_t count_or_unknown(cjson_fields& f, const char* name) {
  if (const json v = f.get<json>(name); v.is_number() && v.get<double>() < 0) return -1;
  const auto n = f.get<std::uint64_t>(name);
  return n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ? -1 : static_cast<std::int64_t>(n);
}

stream_result read_stream(const json& s) {
  if (!s.is_object()) throw protocol_error("iperf3 results: field 'streams' must hold objects");
  cjson_fields f(s, "iperf3 results");
  stream_result r;
  r.id = f.get<std::int64_t>("id");
  r.bytes = f.get<std::uint64_t>("bytes");
  r.retransmits = count_or_unknown(f, "retransmits");
  r.jitter = f.get<double>("jitter");
  r.errors = f.get<std::uint64_t>("errors");
  r.packets = f.get<std::uint64_t>("packets");
  // Absent from servers before 3.2.
  r.start_time = f.get_or("start_time", r.start_time);
  r.end_time = f.get_or("end_time", r.end_time);
  return r;
}

}  // namespace

bool is_cookie(std::string_view b) noexcept {
  if (b.size() != cookie_size || b.back() != '\0') return false;
  for (std::size_t i = 0; i + 1 < b.size(); ++i)
    if (!is_cookie_char(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

params parse_params(std::string_view text_in) {
  const json j = parse_object(text_in, "parameters");
  cjson_fields f(j, "iperf3 parameters");
  params p;
  f.read_present(p);
  p.mss = f.get_or("MSS", p.mss);
  p.tos = f.get_or("TOS", p.tos);
  // Keys of later iperf3 versions: listed (a few), for a refusal naming them.
  p.unknown = f.unread();
  if (p.unknown.size() > 16) p.unknown.resize(16);
  return p;
}

results parse_results(std::string_view text_in) {
  const json j = parse_object(text_in, "results");
  cjson_fields f(j, "iperf3 results");
  results r;
  r.cpu_util_total = f.get<double>("cpu_util_total");
  r.cpu_util_user = f.get<double>("cpu_util_user");
  r.cpu_util_system = f.get<double>("cpu_util_system");
  r.sender_has_retransmits = count_or_unknown(f, "sender_has_retransmits");
  r.congestion_used = f.get_or("congestion_used", r.congestion_used);
  for (const json& s : f.get<std::vector<json>>("streams")) r.streams.push_back(read_stream(s));
  return r;
}

std::string encode_params(const params& p) {
  json j = json::object();
  if (p.tcp) j["tcp"] = true;
  if (p.udp) j["udp"] = true;
  if (p.sctp) j["sctp"] = true;
  if (p.mptcp) j["mptcp"] = true;
  j["omit"] = p.omit;
  if (p.server_affinity != -1) j["server_affinity"] = p.server_affinity;
  j["time"] = p.time;
  j["num"] = p.num;
  j["blockcount"] = p.blockcount;
  if (p.mss) j["MSS"] = p.mss;
  if (p.nodelay) j["nodelay"] = true;
  j["parallel"] = p.parallel;
  if (p.reverse) j["reverse"] = true;
  if (p.bidirectional) j["bidirectional"] = true;
  if (p.window) j["window"] = p.window;
  if (p.len) j["len"] = p.len;
  if (p.bandwidth) j["bandwidth"] = p.bandwidth;
  if (p.fqrate) j["fqrate"] = p.fqrate;
  if (p.pacing_timer) j["pacing_timer"] = p.pacing_timer;
  if (p.burst) j["burst"] = p.burst;
  if (p.tos) j["TOS"] = p.tos;
  if (p.flowlabel) j["flowlabel"] = p.flowlabel;
  if (!p.title.empty()) j["title"] = p.title;
  if (!p.extra_data.empty()) j["extra_data"] = p.extra_data;
  if (!p.congestion.empty()) j["congestion"] = p.congestion;
  if (!p.congestion_used.empty()) j["congestion_used"] = p.congestion_used;
  if (p.get_server_output) j["get_server_output"] = 1;
  if (p.udp_counters_64bit) j["udp_counters_64bit"] = 1;
  if (p.repeating_payload) j["repeating_payload"] = 1;
  if (p.zerocopy) j["zerocopy"] = p.zerocopy;
  if (p.dont_fragment) j["dont_fragment"] = p.dont_fragment;
  if (p.skip_rx_copy) j["skip_rx_copy"] = p.skip_rx_copy;
  if (!p.authtoken.empty()) j["authtoken"] = p.authtoken;
  j["client_version"] = p.client_version;
  return j.dump();
}

std::string encode_results(const results& r) {
  json streams = json::array();
  for (const stream_result& s : r.streams) streams.push_back(write_described(s));
  json j = {{"cpu_util_total", r.cpu_util_total},
            {"cpu_util_user", r.cpu_util_user},
            {"cpu_util_system", r.cpu_util_system},
            {"sender_has_retransmits", r.sender_has_retransmits}};
  if (!r.congestion_used.empty()) j["congestion_used"] = r.congestion_used;
  j["streams"] = std::move(streams);
  if (!r.server_output_text.empty()) j["server_output_text"] = r.server_output_text;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string frame(std::string_view json_text) {
  const auto n = static_cast<std::uint32_t>(json_text.size());
  std::string out(4, '\0');
  out[0] = static_cast<char>(n >> 24);
  out[1] = static_cast<char>(n >> 16);
  out[2] = static_cast<char>(n >> 8);
  out[3] = static_cast<char>(n);
  out.append(json_text);
  return out;
}

std::size_t decode_length(const unsigned char (&h)[4]) {
  const std::size_t n = (std::size_t{h[0]} << 24) | (std::size_t{h[1]} << 16) | (std::size_t{h[2]} << 8) | h[3];
  if (n > max_json_size)
    throw protocol_error(fmt::format("iperf3 message of {} bytes, more than {}", n, max_json_size));
  return n;
}

}  // namespace nb::iperf3
