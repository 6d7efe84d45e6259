#include "core/wire/iperf3/iperf3_wire.hpp"

#include "core/json/json_fields.hpp"
#include "core/json/json_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace nb::iperf3 {

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(std::string_view what, std::string_view field, std::string_view why) {
  throw protocol_error(fmt::format("iperf3 {}: '{}' {}", what, field, why));
}

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

// cJSON numbers are doubles: an integer field must hold a whole number within its range.
template <class T>
T whole(const json& v, std::string_view what, std::string_view field) {
  if (!v.is_number()) fail(what, field, "must be a number");
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) fail(what, field, "is out of range");
      return static_cast<T>(u);
    }
    const auto i = v.get<std::int64_t>();
    if (i < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        (i > 0 && static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
      fail(what, field, "is out of range");
    return static_cast<T>(i);
  }
  const double d = v.get<double>();
  // 2^63 and 2^64 are exact doubles: the bounds below hold for the conversion.
  if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(std::numeric_limits<T>::min()) ||
      d >= std::ldexp(1.0, std::numeric_limits<T>::digits))
    fail(what, field, "must be a whole number in range");
  return static_cast<T>(d);
}

double real(const json& v, std::string_view what, std::string_view field) {
  if (!v.is_number()) fail(what, field, "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(what, field, "must be finite");
  return d;
}

std::string text(const json& v, std::string_view what, std::string_view field) {
  if (!v.is_string()) fail(what, field, "must be a string");
  return v.get<std::string>();
}

// A count where -1 means unknown: iperf3's cJSON prints integers unsigned, so -1 arrives as 2^64 - 1.
std::int64_t count_or_unknown(const json& v, std::string_view what, std::string_view field) {
  const auto n = v.is_number() && v.get<double>() < 0 ? ~0ULL : whole<std::uint64_t>(v, what, field);
  return n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ? -1 : static_cast<std::int64_t>(n);
}

void read_param(params& p, const std::string& key, const json& v) {
  constexpr std::string_view w = "parameters";
  // Flags are present keys (cJSON_AddTrueToObject); a number where iperf3 sends one (get_server_output).
  if (key == "tcp") p.tcp = true;
  else if (key == "udp") p.udp = true;
  else if (key == "sctp") p.sctp = true;
  else if (key == "mptcp") p.mptcp = true;
  else if (key == "nodelay") p.nodelay = true;
  else if (key == "reverse") p.reverse = true;
  else if (key == "bidirectional") p.bidirectional = true;
  else if (key == "get_server_output") p.get_server_output = true;
  else if (key == "udp_counters_64bit") p.udp_counters_64bit = true;
  else if (key == "repeating_payload") p.repeating_payload = true;
  else if (key == "omit") p.omit = whole<std::int64_t>(v, w, key);
  else if (key == "server_affinity") p.server_affinity = whole<std::int64_t>(v, w, key);
  else if (key == "time") p.time = whole<std::int64_t>(v, w, key);
  else if (key == "num") p.num = whole<std::uint64_t>(v, w, key);
  else if (key == "blockcount") p.blockcount = whole<std::uint64_t>(v, w, key);
  else if (key == "MSS") p.mss = whole<std::int64_t>(v, w, key);
  else if (key == "parallel") p.parallel = whole<std::int64_t>(v, w, key);
  else if (key == "window") p.window = whole<std::int64_t>(v, w, key);
  else if (key == "len") p.len = whole<std::int64_t>(v, w, key);
  else if (key == "bandwidth") p.bandwidth = whole<std::uint64_t>(v, w, key);
  else if (key == "fqrate") p.fqrate = whole<std::uint64_t>(v, w, key);
  else if (key == "pacing_timer") p.pacing_timer = whole<std::int64_t>(v, w, key);
  else if (key == "burst") p.burst = whole<std::int64_t>(v, w, key);
  else if (key == "TOS") p.tos = whole<std::int64_t>(v, w, key);
  else if (key == "flowlabel") p.flowlabel = whole<std::int64_t>(v, w, key);
  else if (key == "zerocopy") p.zerocopy = whole<std::int64_t>(v, w, key);
  else if (key == "dont_fragment") p.dont_fragment = whole<std::int64_t>(v, w, key);
  else if (key == "skip_rx_copy") p.skip_rx_copy = whole<std::int64_t>(v, w, key);
  else if (key == "title") p.title = text(v, w, key);
  else if (key == "extra_data") p.extra_data = text(v, w, key);
  else if (key == "congestion") p.congestion = text(v, w, key);
  else if (key == "congestion_used") p.congestion_used = text(v, w, key);
  else if (key == "authtoken") p.authtoken = text(v, w, key);
  else if (key == "client_version") p.client_version = text(v, w, key);
  else if (p.unknown.size() < 16) p.unknown.push_back(key);
}

stream_result read_stream(const json& s) {
  constexpr std::string_view w = "results";
  if (!s.is_object()) fail(w, "streams", "must hold objects");
  auto need = [&](const char* name) -> const json& {
    auto it = s.find(name);
    if (it == s.end()) fail(w, name, "is missing");
    return *it;
  };
  stream_result r;
  r.id = whole<std::int64_t>(need("id"), w, "id");
  r.bytes = whole<std::uint64_t>(need("bytes"), w, "bytes");
  r.retransmits = count_or_unknown(need("retransmits"), w, "retransmits");
  r.jitter = real(need("jitter"), w, "jitter");
  r.errors = whole<std::uint64_t>(need("errors"), w, "errors");
  r.packets = whole<std::uint64_t>(need("packets"), w, "packets");
  // Absent from servers before 3.2.
  if (auto it = s.find("start_time"); it != s.end()) r.start_time = real(*it, w, "start_time");
  if (auto it = s.find("end_time"); it != s.end()) r.end_time = real(*it, w, "end_time");
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
  params p;
  for (const auto& [key, value] : j.items()) read_param(p, key, value);
  return p;
}

results parse_results(std::string_view text_in) {
  constexpr std::string_view w = "results";
  const json j = parse_object(text_in, w);
  results r;
  auto need = [&](const char* name) -> const json& {
    auto it = j.find(name);
    if (it == j.end()) fail(w, name, "is missing");
    return *it;
  };
  r.cpu_util_total = real(need("cpu_util_total"), w, "cpu_util_total");
  r.cpu_util_user = real(need("cpu_util_user"), w, "cpu_util_user");
  r.cpu_util_system = real(need("cpu_util_system"), w, "cpu_util_system");
  r.sender_has_retransmits = count_or_unknown(need("sender_has_retransmits"), w, "sender_has_retransmits");
  if (auto it = j.find("congestion_used"); it != j.end()) r.congestion_used = text(*it, w, "congestion_used");
  const json& streams = need("streams");
  if (!streams.is_array()) fail(w, "streams", "must be an array");
  for (const json& s : streams) r.streams.push_back(read_stream(s));
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
