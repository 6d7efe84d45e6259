#include "core/wire/iperf3_client.hpp"

#include "core/base/json_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace nb::iperf3 {

namespace {

// i_errno values a server refuses with, in the words of iperf3's own client (iperf_error.c).
std::string error_text(std::int32_t code) {
  switch (static_cast<error>(code)) {
    case error::duration: return "test duration too long";
    case error::num_streams: return "number of parallel streams too large";
    case error::block_size: return "block size too large";
    case error::buf_size: return "socket buffer size too large";
    case error::mss: return "TCP MSS too large";
    case error::unimplemented: return "an option you are trying to set is not implemented yet";
    case error::udp_block_size: return "block size invalid";
    case error::set_congestion: return "unable to set TCP_CONGESTION";
    case error::auth_test: return "test authorization failed";
    case error::stream_accept: return "unable to accept stream connection";
    default: return fmt::format("iperf3 error code {}", code);
  }
}

// The server's version from its own output (-J: its JSON; else its text, which says none): "iperf 3.12"
// becomes "iperf3 3.12".
std::string version_of(const nlohmann::json& j) {
  const auto out = j.find("server_output_json");
  if (out == j.end() || !out->is_object()) return {};
  const auto start = out->find("start");
  if (start == out->end() || !start->is_object()) return {};
  const auto v = start->find("version");
  if (v == start->end() || !v->is_string()) return {};
  std::string s = v->get<std::string>();
  if (s.rfind("iperf ", 0) == 0) s = "iperf3 " + s.substr(6);
  return s;
}

constexpr const char* setup_order[] = {"CREATE_STREAMS", "TEST_START", "TEST_RUNNING"};

}  // namespace

std::string state_name(signed char s) {
  switch (static_cast<state>(s)) {
    case state::test_start: return "TEST_START";
    case state::test_running: return "TEST_RUNNING";
    case state::test_end: return "TEST_END";
    case state::param_exchange: return "PARAM_EXCHANGE";
    case state::create_streams: return "CREATE_STREAMS";
    case state::server_terminate: return "SERVER_TERMINATE";
    case state::client_terminate: return "CLIENT_TERMINATE";
    case state::exchange_results: return "EXCHANGE_RESULTS";
    case state::display_results: return "DISPLAY_RESULTS";
    case state::iperf_done: return "IPERF_DONE";
    case state::access_denied: return "ACCESS_DENIED";
    case state::server_error: return "SERVER_ERROR";
  }
  return fmt::format("state {} (no iperf3 state)", int{s});
}

bool is_refusal(signed char s) noexcept {
  const auto st = static_cast<state>(s);
  return st == state::access_denied || st == state::server_error || st == state::server_terminate;
}

std::string refusal_text(signed char s, std::int32_t code) {
  if (static_cast<state>(s) == state::access_denied)
    return "iperf3 server: the server is busy running a test (ACCESS_DENIED)";
  if (static_cast<state>(s) == state::server_terminate) return "iperf3 server: the server terminated the test";
  return fmt::format("iperf3 server refused the test: {}", error_text(code));
}

setup_states::step setup_states::take(signed char s) {
  const std::string name = state_name(s);
  if (taken_ < 3 && name == setup_order[taken_]) {
    ++taken_;
    return taken_ == 1 ? step::create_streams : taken_ == 2 ? step::wait : step::run;
  }
  for (int i = 0; i < taken_; ++i)
    if (name == setup_order[i]) throw protocol_error(fmt::format("iperf3 server sent {} a second time", name));
  if (taken_ == 3) throw protocol_error(fmt::format("iperf3 server sent {} after TEST_RUNNING", name));
  throw protocol_error(fmt::format("iperf3 server sent {} after {}, where {} comes", name,
                                   taken_ ? last() : "the parameters", awaited()));
}

const char* setup_states::awaited() const noexcept { return taken_ < 3 ? setup_order[taken_] : ""; }

const char* setup_states::last() const noexcept { return taken_ ? setup_order[taken_ - 1] : ""; }

void expect_state(signed char s, state want, std::string_view where) {
  if (static_cast<state>(s) != want)
    throw protocol_error(fmt::format("iperf3 server sent {} {}, where {} comes", state_name(s), where,
                                     state_name(static_cast<signed char>(want))));
}

server_results read_server_results(std::string_view json, std::size_t streams) {
  if (json.size() > max_server_results_size)
    throw protocol_error(fmt::format("iperf3 results of {} bytes, more than {}", json.size(), max_server_results_size));
  bool too_deep = false;
  nlohmann::json j = parse_json_bounded(json, max_json_depth, &too_deep);
  if (j.is_discarded())
    throw protocol_error(fmt::format("iperf3 results: {}", too_deep ? "nested too deep" : "not JSON"));
  if (!j.is_object()) throw protocol_error("iperf3 results: not a JSON object");
  server_results out;
  out.version = version_of(j);
  // Only the version is taken from the server's own output; the figures are its results' own fields.
  j.erase("server_output_json");
  j.erase("server_output_text");
  out.figures = parse_results(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (out.figures.streams.size() != streams)
    throw protocol_error(fmt::format("iperf3 results: {} streams, not {}", out.figures.streams.size(), streams));
  return out;
}

}  // namespace nb::iperf3
