// netload: a netperf-style load generator (UDP_STREAM, TCP_STREAM, UDP_RR, TCP_RR) with counts that add up.
#include "core/base/version.hpp"
#include "core/host/host_info.hpp"
#include "core/sys/kernel_features.hpp"
#include "core/sys/socket.hpp"
#include "netload/iperf3/iperf3_peer.hpp"
#include "netload/iperf_cli/iperf_args.hpp"
#include "netload/native/bidir.hpp"
#include "netload/native/client.hpp"
#include "netload/native/outcome.hpp"
#include "netload/native/report.hpp"
#include "netload/netperf/netserver_peer.hpp"
#include "netload/search/search_run.hpp"

#include <fmt/format.h>

#include <cstdio>

#include <unistd.h>

namespace {

using namespace nb::load;  // exit_code

int run(const nb::load::client_options& o) {
  // -T: the control thread too, as netperf, or it would wander onto the other side's CPU.
  if (o.local_cpu >= 0 && !nb::pin_thread_to_cpu(o.local_cpu))
    fmt::print(stderr, "netload: cannot run on CPU {} (-T): not pinned\n", o.local_cpu);
  boost::asio::io_context io;  // run_test owns the signals
  std::int64_t first_start = 0;
  auto sink = [&](const nb::interval_figures& i) {
    if (!first_start) first_start = i.start_ns;
    if (o.json_stream) fmt::print("{}\n", nb::load::interval_event(i).dump());
    else if (!o.json) fmt::print("{}", nb::load::format_interval_line(i, first_start, o.rate_units, o.omit_s));
    std::fflush(stdout);
  };
  auto armed = [&] {
    if (o.json_stream) fmt::print("{{\"type\":\"armed\"}}\n");
    else fmt::print(stderr, "netload: connected; waiting for the start instant on standard input\n");
    std::fflush(stdout);
  };
  nb::load::client_events events;
  events.interval = sink;
  events.armed = armed;
  nb::test_result r = o.peer == nb::load::peer_kind::iperf3      ? nb::load::run_iperf3_test(io, o, std::move(events))
                      : o.peer == nb::load::peer_kind::netserver ? nb::load::run_netserver_test(o, events)
                                                                 : nb::load::run_test(io, o, std::move(events));
  r.options = nb::load::options_json(o);
  nlohmann::json j = nb::to_json(r);
  if (o.json_stream) {
    j["type"] = "result";
    fmt::print("{}\n", j.dump());
  } else if (o.json) {
    fmt::print("{}\n", j.dump(2));
  } else if (r.ok) {
    fmt::print("{}{}", nb::load::interrupted_line(r),
               nb::load::format_table(r, o.local_cpu_util, o.remote_cpu_util, o.rate_units));
  }
  return nb::load::exit_status(r);
}

// `harness check`: the clock service runs until the harness closes our stdin.
int host_info(const nb::load::client_options& o) {
  fmt::print("{}\n", nb::host_facts(o.mtu_peers).dump());
  std::fflush(stdout);
  nb::serve_clock(STDIN_FILENO, stdout);
  return ok;
}

// Empty: nothing to run.
std::vector<nb::load::client_options> iperf_runs(const std::vector<std::string>& args) {
  auto t = nb::load::translate_iperf(args);
  if (!t) return {};
  if (t->translate_only) {
    fmt::print("{}\n", t->netload_command());
    return {};
  }
  fmt::print(stderr, "netload: {}\n", t->summary());
  return std::move(t->runs);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    std::vector<nb::load::client_options> runs;
    if (nb::load::is_iperf_command(args)) {
      runs = iperf_runs(args);
      if (runs.empty()) return ok;
    } else {
      auto options = nb::load::parse_command_line(args);
      if (!options) return ok;
      if (options->host_info) return host_info(*options);
      runs.push_back(std::move(*options));
    }
    nb::report_kernel_fallbacks(
        "netload", {nb::kernel_feature::udp_gso, nb::kernel_feature::udp_gro, nb::kernel_feature::meminfo});
    int status = ok;
    for (const auto& o : runs) {
      const int s = o.search.enabled()                                   ? nb::load::run_search(o)
                    : o.bidir && o.peer == nb::load::peer_kind::netserve ? nb::load::run_bidir(o)
                                                                         : run(o);
      status = worse(status, s);
      // iperf2 -r: a failed forward run leaves nothing for the reverse; no test starts after a stop.
      if (s == failed || is_interrupted_status(s)) break;
    }
    return status;
  } catch (const nb::load::usage_error& e) {
    fmt::print(stderr, "netload: {}\n", e.what());
    return usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "netload: {}\n", e.what());
    return failed;
  }
}
