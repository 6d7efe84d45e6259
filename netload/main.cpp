// netload: a netperf-style load generator (UDP_STREAM, TCP_STREAM) with counts that add up.
#include "core/host_info.hpp"
#include "core/kernel_features.hpp"
#include "core/socket.hpp"
#include "core/version.hpp"
#include "netload/bidir.hpp"
#include "netload/client.hpp"
#include "netload/outcome.hpp"
#include "netload/report.hpp"

#include <boost/asio/signal_set.hpp>
#include <fmt/format.h>

#include <cstdio>

#include <unistd.h>

namespace {

using namespace nb::load;  // exit_code

int run(const nb::load::client_options& o) {
  // -T: like netperf, the whole program goes where it was asked (its control thread too, which would
  // otherwise wander onto the other side's CPU); each stream's thread then takes its own CPU.
  if (o.local_cpu >= 0 && !nb::pin_thread_to_cpu(o.local_cpu))
    fmt::print(stderr, "netload: cannot run on CPU {} (-T): not pinned\n", o.local_cpu);
  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) io.stop();  // the test object's destructor stops and joins the data threads
  });
  std::int64_t first_start = 0;
  auto sink = [&](const nb::interval_figures& i) {
    if (!first_start) first_start = i.start_ns;
    if (o.json_stream)
      fmt::print("{}\n", nb::load::interval_event(i).dump());
    else if (!o.json)
      fmt::print("{}", nb::load::format_interval_line(i, first_start));
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
  nb::test_result r = nb::load::run_test(io, o, std::move(events));
  if (!r.ok && r.error.empty()) r.error = "interrupted";
  r.options = nb::load::options_json(o);
  nlohmann::json j = nb::to_json(r);
  if (o.json_stream) {
    j["type"] = "result";
    fmt::print("{}\n", j.dump());
  } else if (o.json) {
    fmt::print("{}\n", j.dump(2));
  } else if (r.ok) {
    fmt::print("{}", nb::load::format_table(r, o.local_cpu_util, o.remote_cpu_util));
  }
  return nb::load::exit_status(r);
}

// `harness check`: the facts first, then the clock service until the harness closes our stdin.
int host_info(const nb::load::client_options& o) {
  fmt::print("{}\n", nb::host_facts(o.mtu_peers).dump());
  std::fflush(stdout);
  nb::serve_clock(STDIN_FILENO, stdout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto options = nb::load::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    if (!options) return ok;
    if (options->host_info) return host_info(*options);
    nb::report_kernel_fallbacks("netload", {nb::kernel_feature::udp_gso, nb::kernel_feature::udp_gro,
                                            nb::kernel_feature::meminfo});
    return options->bidir ? nb::load::run_bidir(*options) : run(*options);
  } catch (const nb::load::usage_error& e) {
    fmt::print(stderr, "netload: {}\n", e.what());
    return usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "netload: {}\n", e.what());
    return failed;
  }
}
