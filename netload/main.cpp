// netload: a netperf-style load generator (UDP_STREAM, TCP_STREAM) with counts that add up.
#include "core/host_info.hpp"
#include "core/kernel_features.hpp"
#include "core/socket.hpp"
#include "core/version.hpp"
#include "netload/client.hpp"
#include "netload/iperf_args.hpp"
#include "netload/report.hpp"

#include <boost/asio/signal_set.hpp>
#include <fmt/format.h>

#include <cstdio>

#include <unistd.h>

namespace {

// Exit status: 0 the test ran and its counts reconcile; 1 the test failed (the reason is printed);
// 2 bad command line; 3 the test ran but sent != received + lost; 4 the test ran and reconciles, but a
// paced test's sender missed its target by more than 1 % (its figures are not the load that was asked
// for, which a script must not take for a pass).
enum exit_code { ok = 0, failed = 1, usage = 2, unreconciled = 3, target_missed = 4 };

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
  nb::test_result r = nb::load::run_test(io, o, {sink, armed});
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
  if (!r.ok) {
    fmt::print(stderr, "netload: {}\n", r.error);
    return failed;
  }
  if (!r.loss.reconciles) {
    fmt::print(stderr, "netload: counts do not reconcile: {}\n", r.loss.note);
    return unreconciled;
  }
  if (r.target && !r.target->met) {
    fmt::print(stderr, "netload: paced target missed: {:.1f} of {:.1f} {} sent ({:+.2f} %)\n", r.target->achieved_pps,
               r.target->requested_pps, r.kind == nb::test_kind::tcp_stream ? "messages/s" : "pps", r.target->error_percent);
    return target_missed;
  }
  return ok;
}

// `harness check`: the facts first, then the clock service until the harness closes our stdin.
int host_info(const nb::load::client_options& o) {
  fmt::print("{}\n", nb::host_facts(o.mtu_peers).dump());
  std::fflush(stdout);
  nb::serve_clock(STDIN_FILENO, stdout);
  return ok;
}

// --iperf3 / --iperf2 ARGS: the runs iperf's command line comes to (iperf2's -r: two, one after the
// other), after the line saying which netload command line that is. Empty: nothing to run.
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

// Of two runs' statuses, the one a script must see: a failure, then counts that do not reconcile,
// then a missed target.
int worse(int a, int b) {
  auto rank = [](int s) { return s == failed ? 3 : s == unreconciled ? 2 : s == target_missed ? 1 : 0; };
  return rank(b) > rank(a) ? b : a;
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
    nb::report_kernel_fallbacks("netload", {nb::kernel_feature::udp_gso, nb::kernel_feature::udp_gro,
                                            nb::kernel_feature::meminfo});
    int status = ok;
    for (const auto& o : runs) {
      const int s = run(o);
      status = worse(status, s);
      if (s == failed) break;  // iperf2 -r: a forward run that failed leaves nothing for the reverse one
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
