// netserve: a netserver-like listener on many ports in one process.
#include "core/base/cli_help.hpp"
#include "core/base/port_spec.hpp"
#include "core/base/version.hpp"
#include "core/policy/receive_engine.hpp"
#include "core/sys/kernel_features.hpp"
#include "core/wire/native/auth.hpp"
#include "netserve/server.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <boost/asio/signal_set.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <stdexcept>

namespace {

using nb::cli::option;

// Bounded at parse: no duration, instant or count overflows, and the budget's arithmetic stays exact.
void add_limit_options(CLI::App& app, nb::serve::server_options& options, std::uint64_t& buffer_mib) {
  using namespace nb::cli;
  const std::string test = "Limits per test", budget = "Budget, whole process (see below)";
  option(app, "--max-duration", options.max_duration_s, "Longest test accepted, seconds", "SECONDS", test)
      ->capture_default_str()
      ->check(number_in("--max-duration", 0.001, nb::serve::max_duration_bound_s, "seconds"));
  option(app, "--max-streams", options.max_streams, "Most streams per test", "N", test)
      ->capture_default_str()
      ->check(whole_in("--max-streams", 1, nb::serve::max_streams_bound));
  option(app, "--max-tests-per-port", options.max_tests_per_port, "Most concurrent tests per port", "N", test)
      ->capture_default_str()
      ->check(whole_in("--max-tests-per-port", 1, 65536));
  option(app, "--max-start-lead", options.max_start_lead_s, "Farthest start instant accepted, seconds ahead", "SECONDS",
         test)
      ->capture_default_str()
      ->check(number_in("--max-start-lead", 1.0, nb::serve::max_start_lead_bound_s, "seconds"));
  option(app, "--max-tests", options.budget.tests, "Most tests registered at once, all ports", "N", budget)
      ->capture_default_str()
      ->check(whole_in("--max-tests", 1, 65536));
  option(app, "--max-data-streams", options.budget.streams,
         "Most data streams (a thread and a descriptor each, two sending TCP), all tests", "N", budget)
      ->capture_default_str()
      ->check(whole_in("--max-data-streams", 1, 65536));
  option(app, "--max-buffer-memory", buffer_mib, "Most memory in stream buffers, all tests, MiB", "MIB", budget)
      ->capture_default_str()
      ->check(whole_in("--max-buffer-memory", 1, 1 << 20));
  option(app, "--max-connections", options.budget.connections, "Most open connections (control, or not yet identified)",
         "N", budget)
      ->capture_default_str()
      ->check(whole_in("--max-connections", 1, 1 << 20));
  option(app, "--max-socket-buffer", options.max_socket_buffer,
         "Largest socket buffer a client's request is granted (its -s/-S), bytes", "BYTES", budget)
      ->capture_default_str()
      ->check(whole_in("--max-socket-buffer", 64 << 10, nb::max_socket_buffer_request));
  option(app, "--client-share", options.budget.client_share,
         "Fraction of each budget, and of each port's tests, one client address may hold", "FRACTION", budget)
      ->capture_default_str()
      ->check(number_in("--client-share", 0.01, 1.0, ""));
}

void add_socket_options(CLI::App& app, nb::serve::server_options& options, unsigned& rx_threads) {
  using namespace nb::cli;
  const std::string group = "Receiving";
  option(app, "--rcvbuf", options.rcvbuf,
         "Receive buffer of each UDP socket, bytes (default: 32 MiB per port over its lanes, at least 4 MiB)", "BYTES",
         group)
      ->check(whole_in("--rcvbuf", 0, nb::max_socket_buffer_request));
  option(app, "--rx-threads", rx_threads,
         "UDP receive sockets and threads per port, one per CPU (0 = every CPU netserve may run on)", "N", group)
      ->capture_default_str()
      ->check(whole_in("--rx-threads", 0, 64));
  app.add_flag("!--no-gro", options.gro, "Do not use UDP GRO on receive")->group(group);
  option(app, "--first-message-timeout", options.first_message_timeout_s,
         "Seconds a new connection may take to send its first message before it is closed", "SECONDS", group)
      ->capture_default_str()
      ->check(number_in("--first-message-timeout", 0.1, 3600.0, "seconds"));
  option(app, "--netperf-idle-max", options.netperf_idle_max_s,
         "Seconds a netperf control connection may spend outside its tests, in all (its requests, the answers); no "
         "message extends it",
         "SECONDS", group)
      ->capture_default_str()
      ->check(number_in("--netperf-idle-max", 0.1, 3600.0, "seconds"));
  option(app, "--drain-quiet", options.drain_quiet_s, "Seconds of quiet that end a UDP test's drain", "SECONDS", group)
      ->capture_default_str()
      ->check(number_in("--drain-quiet", 0.001, 60.0, "seconds"));
  option(app, "--drain-max", options.drain_max_s, "Longest UDP drain, seconds", "SECONDS", group)
      ->capture_default_str()
      ->check(number_in("--drain-max", 0.001, 600.0, "seconds"));
}

struct engine_choice {
  nb::receive_engine engine = nb::receive_engine::socket;
  nb::serve::xdp_options xdp;
};

void add_engine_options(CLI::App& app, engine_choice& e) {
  const std::string group = "Receive engine";
  // --help shows what this build has: scripts and the bench read it.
  const bool xdp = nb::serve::xdp_engine::built_in();
  // IsMember checks the word before the callback reads it into the type.
  app.add_option_function<std::string>(
         "--engine", [&e](const std::string& name) { e.engine = *nb::parse_receive_engine(name); },
         xdp ? "Where forward UDP is counted: socket, or xdp (an XDP program on --interface counts at the driver; root)"
             : "Where forward UDP is counted: socket (xdp: not in this build)")
      ->default_str(std::string(nb::to_string(e.engine)))
      ->option_text(xdp ? "socket|xdp" : "socket")
      ->check(CLI::IsMember({"socket", "xdp"}))
      ->group(group);
  option(app, "--interface", e.xdp.interface, "With --engine xdp: the interface the tests' datagrams arrive on", "DEV",
         group);
  app.add_flag("--xdp-pass", e.xdp.pass,
               "With --engine xdp: pass counted datagrams on to the socket path, which counts them too (default: drop)")
      ->group(group);
  option(app, "--xdp-mode", e.xdp.mode,
         "With --engine xdp: native (the driver's), generic, or auto (native where offered)", "auto|native|generic",
         group)
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "native", "generic"}));
}

void check_engine(const engine_choice& e) {
  if (e.engine == nb::receive_engine::xdp && e.xdp.interface.empty())
    throw CLI::ValidationError("--engine xdp", "needs --interface DEV");
  if (e.engine != nb::receive_engine::xdp && (!e.xdp.interface.empty() || e.xdp.pass || e.xdp.mode != "auto"))
    throw CLI::ValidationError("--interface, --xdp-pass, --xdp-mode", "apply only with --engine xdp");
}

constexpr const char* examples =
    "Examples:\n"
    "  netserve -p 12865                        one port, like netserver\n"
    "  netserve -p 11256-11263 -L 192.0.2.1     eight ports on one address\n"
    "  netserve -p 0                            any free port (the ready line names it)\n"
    "  netserve -p 11256 --psk-file key.txt     only clients holding the key\n"
    "  netserve -p 11256-11263 --engine xdp --interface eth1\n"
    "                                           count forward UDP at eth1's driver (root)\n"
    "\nExit status: 0 stopped by SIGINT or SIGTERM; 1 could not start (a port that cannot be bound, a key\n"
    "file that cannot be read: one line on stderr says which); 2 bad command line.\n"
    "\nOld kernels: without UDP GRO (Linux 5.0) netserve receives with recvmmsg, without UDP GSO (4.18)\n"
    "it sends (--reverse) with sendmmsg, without reuseport BPF (4.5) a port's lanes share it by the\n"
    "kernel's hash, without SO_MEMINFO (4.12) socket drops are unknown. A line on stderr, the ready\n"
    "line's \"kernel\" and each result's batching say which. NETBENCH_DISABLE=gso,gro,cbpf,meminfo\n"
    "(any of them) takes those paths on any kernel, for tests.\n\n";

void add_listen_options(CLI::App& app, nb::serve::server_options& options, std::vector<std::string>& port_specs,
                        std::string& psk_file) {
  const std::string listen = "Listening";
  option(app, "-p,--port", port_specs, "Ports: 11256-11263, 11256,11300, 0 = any free port; repeatable", "PORTS",
         listen)
      ->required();
  option(app, "-L,--bind", options.bind, "Local address to bind (IPv4 or IPv6)", "ADDR", listen)->capture_default_str();
  option(app, "--psk-file", psk_file,
         "Key file (first line, mode 600): every connection must prove it holds the key (netload --psk-file)", "FILE",
         listen);
  // So that netserver command lines work.
  app.add_flag_callback(
         "-D", [] {}, "Stay in the foreground (always; accepted for netserver compatibility)")
      ->group(listen);
}

// 1024 ports need more than the usual soft limit of 1024 descriptors.
void raise_descriptor_limit() {
  if (rlimit lim{}; ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
}

void serve(const nb::serve::server_options& options) {
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
}

}  // namespace

int main(int argc, char** argv) {
  nb::serve::server_options options;
  std::vector<std::string> port_specs;
  CLI::App app{"netserve: receives netload tests on many ports (TCP control, TCP and UDP data on each port)"};
  std::string psk_file;
  add_listen_options(app, options, port_specs, psk_file);
  std::uint64_t buffer_mib = options.budget.buffer_bytes >> 20;
  add_limit_options(app, options, buffer_mib);
  unsigned rx_threads = 0;
  add_socket_options(app, options, rx_threads);
  engine_choice engine;
  add_engine_options(app, engine);
  nb::cli::set_help(app, "netserve", "netserve -p PORTS [OPTIONS]");
  app.set_version_flag("-V,--version", nb::version, "Print the version and exit")->group("Other");
  // The defaults' figures: --help exits before the rest is parsed.
  app.footer(examples + nb::serve::budget_help(options.budget, options.max_tests_per_port));
  try {
    app.parse(argc, argv);
    check_engine(engine);
    options.ports = nb::parse_port_specs(port_specs);
  } catch (const CLI::Error& e) {
    return nb::cli::report(app, e, "netserve");
  } catch (const std::invalid_argument& e) {  // a bad port list
    fmt::print(stderr, "netserve: -p: {}\n", e.what());
    return nb::cli::usage_status;
  }
  options.budget.buffer_bytes = buffer_mib << 20;

  try {
    nb::report_kernel_fallbacks("netserve", {nb::kernel_feature::udp_gso, nb::kernel_feature::udp_gro,
                                             nb::kernel_feature::reuseport_cbpf, nb::kernel_feature::meminfo});
    options.rx_cpus = nb::serve::receive_cpus(nb::allowed_cpus(), rx_threads);
    if (!psk_file.empty()) options.psk = nb::read_psk_file(psk_file);
    if (engine.engine == nb::receive_engine::xdp) {
      options.xdp = std::make_shared<nb::serve::xdp_engine>(engine.xdp);
      fmt::print(stderr, "netserve: forward UDP counted at {}'s driver ({}, {})\n", engine.xdp.interface,
                 options.xdp->name(), engine.xdp.pass ? "passed on to the socket path" : "dropped there");
    }
    raise_descriptor_limit();
    serve(options);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "netserve: {}\n", e.what());
    return 1;
  }
}
