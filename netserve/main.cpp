// netserve: a netserver-like listener that binds many ports in one process.
#include "core/auth.hpp"
#include "core/version.hpp"
#include "netserve/port_spec.hpp"
#include "netserve/server.hpp"

#include <CLI/CLI.hpp>
#include <boost/asio/signal_set.hpp>
#include <fmt/format.h>

#include <sys/resource.h>

#include <cstdio>

namespace {

// What a test and the clients together may take. Every limit is bounded at parse: within the bounds no
// duration, instant or count overflows (server.hpp), and the budget's arithmetic stays exact.
void add_limit_options(CLI::App& app, nb::serve::server_options& options, std::uint64_t& buffer_mib) {
  app.add_option("--max-duration", options.max_duration_s, "Longest test accepted, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.001, nb::serve::max_duration_bound_s));
  app.add_option("--max-streams", options.max_streams, "Most streams per test")
      ->capture_default_str()
      ->check(CLI::Range(std::uint32_t{1}, nb::serve::max_streams_bound));
  app.add_option("--max-tests-per-port", options.max_tests_per_port, "Most concurrent tests per port")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_option("--max-start-lead", options.max_start_lead_s, "Farthest start instant accepted, seconds ahead")
      ->capture_default_str()
      ->check(CLI::Range(1.0, nb::serve::max_start_lead_bound_s));
  app.add_option("--max-tests", options.budget.tests, "Most tests registered at once, all ports")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_option("--max-data-streams", options.budget.streams,
                 "Most data streams (a thread and a descriptor each), all tests")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_option("--max-buffer-memory", buffer_mib, "Most memory in stream buffers, all tests, MiB")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--max-connections", options.budget.connections,
                 "Most open connections (control, or not yet identified)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--max-socket-buffer", options.max_socket_buffer,
                 "Largest socket buffer a client's request is granted (its -s/-S), bytes")
      ->capture_default_str()
      ->check(CLI::Range(64 << 10, 1 << 30));
  app.add_option("--client-share", options.budget.client_share,
                 "Fraction of each budget, and of each port's tests, one client address may hold")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
}

}  // namespace

int main(int argc, char** argv) {
  nb::serve::server_options options;
  std::vector<std::string> port_specs;
  CLI::App app{"netserve: receives netload tests on many ports (TCP control, TCP and UDP data on each port)"};
  app.set_version_flag("-V,--version", nb::version);
  app.add_option("-p,--port", port_specs, "Ports: 11256-11263, 11256,11300, 0 = any free port; repeatable")->required();
  app.add_option("-L,--bind", options.bind, "Local address to bind (IPv4 or IPv6)")->capture_default_str();
  bool foreground = true;  // netserve never daemonizes; -D is accepted so netserver command lines work
  app.add_flag("-D", foreground, "Stay in the foreground (always; accepted for netserver compatibility)");
  std::uint64_t buffer_mib = options.budget.buffer_bytes >> 20;
  add_limit_options(app, options, buffer_mib);
  app.add_option("--rcvbuf", options.rcvbuf, "Receive buffer of each UDP socket, bytes (default: 32 MiB per port over its lanes, at least 4 MiB)")
      ->check(CLI::Range(0, 1 << 30));
  unsigned rx_threads = 0;
  app.add_option("--rx-threads", rx_threads,
                 "UDP receive sockets and threads per port, one per CPU (0 = every CPU netserve may run on)")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app.add_flag("!--no-gro", options.gro, "Do not use UDP GRO on receive");
  app.add_option("--first-message-timeout", options.first_message_timeout_s,
                 "Seconds a new connection may stay silent before it is closed")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--drain-quiet", options.drain_quiet_s, "Seconds of quiet that end a UDP test's drain")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 60.0));
  app.add_option("--drain-max", options.drain_max_s, "Longest UDP drain, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 600.0));
  std::string psk_file;
  app.add_option("--psk-file", psk_file,
                 "Key file (first line, mode 600): every connection must prove it holds the key (netload --psk-file)");
  app.footer(nb::serve::budget_help(options.budget));  // the defaults: --help exits before the rest is parsed
  CLI11_PARSE(app, argc, argv);
  options.budget.buffer_bytes = buffer_mib << 20;

  try {
    options.ports = nb::serve::parse_port_specs(port_specs);
    options.rx_cpus = nb::serve::receive_cpus(nb::allowed_cpus(), rx_threads);
    if (!psk_file.empty()) options.psk = nb::read_psk_file(psk_file);
    // Descriptors per port (TCP acceptor, UDP sockets) plus sessions: 1024 ports need more than the
    // usual soft limit of 1024, so take the hard limit.
    if (rlimit lim{}; ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
      lim.rlim_cur = lim.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &lim);
    }
    boost::asio::io_context io;
    nb::serve::server server(io, options);
    server.bind();
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      fmt::print(stderr, "netserve: signal {}: shutting down\n", signo);
      server.stop();
      io.stop();
    });
    server.start();
    fmt::print("{}\n", server.ready_line());
    std::fflush(stdout);
    io.run();
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "netserve: {}\n", e.what());
    return 1;
  }
}
