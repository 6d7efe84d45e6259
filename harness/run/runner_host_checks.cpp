#include "core/json/json_text.hpp"
#include "harness/records/host_check.hpp"
#include "harness/run/runner.hpp"

#include "core/base/clock.hpp"
#include "core/base/text.hpp"
#include "core/base/version.hpp"
#include "core/host/host_info.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace harness {

using namespace std::chrono_literals;

namespace {

constexpr int clock_exchanges = 8;

std::map<std::string, std::set<std::string>> programs_per_host(const plan& plan, const std::vector<run_spec>& runs) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& r : runs) {
    for (const auto& s : r.servers)
      out[s.host].insert(plan.hosts.at(s.host).stock_peer() ? "stock " + plan.hosts.at(s.host).peer : "netserve");
    for (const auto& i : r.instances) out[i.client].insert("netload");
  }
  return out;
}

}  // namespace

// Over ssh the remote netload announces its pid, so a cancel or a hang is ended there.
asio::awaitable<void> runner::ask_host(host_check& c, const std::set<std::string>& peers) {
  const launcher& l = on(c.host);
  std::vector<std::string> cmd{l.program("netload"), "--host-info"};
  for (const auto& p : peers) cmd.insert(cmd.end(), {"--mtu-to", p});
  const auto argv = l.wrap_announcing_pid(cmd);
  record_command(c.host, argv);
  if (cancelled_) throw std::runtime_error("interrupted");
  nb::child_process p(io_.get_executor(), argv, true);
  process_group::membership member(group_, p, [this, &p] { remote_.erase(&p); });
  const auto limit = std::chrono::seconds(l.target().ssh.connect_timeout + 15);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // The master still holds our pipes: only ending the program there ends a read here.
  asio::steady_timer watchdog(io_);
  std::optional<std::string> line = co_await p.read_line(deadline);
  if (line && l.stops_remotely()) {
    if (const auto pid = remote_pid_of(*line)) {
      remote_[&p] = {c.host, *pid};
      watchdog.expires_at(deadline);
      watchdog.async_wait([this, host = c.host, pid = *pid](boost::system::error_code ec) {
        if (!ec) remote_signal_detached(host, pid, "KILL");
      });
      line = co_await p.read_line(deadline);
    }
  }
  if (line) c.facts = nb::parse_json_bounded(*line);  // another host's output
  if (const auto bad = facts_problem(c.facts); !bad) {
    c.netload_version = c.facts["version"].get<std::string>();
    c.clock = co_await read_clock(p, deadline);
  } else if (line && c.facts.is_object()) {
    c.errors.push_back(fmt::format("netload --host-info gave malformed facts: {}", *bad));
  }
  p.close_stdin();
  const auto o = co_await p.finish(deadline);
  if (cancelled_) throw std::runtime_error("interrupted");
  if (!c.netload_version.empty() || !c.errors.empty()) co_return;
  c.errors.push_back(o.timed_out ? fmt::format("netload --host-info gave no answer within {} s", limit.count())
                                 : fmt::format("'{}' failed ({}): {}", nb::quote_argv(argv), o.exit_code,
                                               nb::first_line(o.stderr_text.empty() ? o.stdout_text : o.stderr_text)));
  // No --host-info in an older netload: say its version (not after a hang: it would hang again).
  if (!o.timed_out) co_await say_version(c, "netload");
}

// Timed on the monotonic clock, with our wall instant taken once: our own clock stepping cannot pass for
// the host's offset.
asio::awaitable<std::optional<clock_offset>> runner::read_clock(nb::child_process& p,
                                                                std::chrono::steady_clock::time_point deadline) {
  const std::int64_t wall0 = nb::wall_ns(), mono0 = nb::mono_ns();
  std::vector<clock_reading> readings;
  for (int i = 0; i < clock_exchanges; ++i) {
    clock_reading r;
    r.asked_ns = wall0 + (nb::mono_ns() - mono0);
    if (!p.write_stdin("\n")) break;
    const auto reply = co_await p.read_line(deadline);
    r.answered_ns = wall0 + (nb::mono_ns() - mono0);
    if (!reply || (r.host_ns = nb::parse_clock_reply(*reply)) < 0) break;
    readings.push_back(r);
  }
  co_return estimate_offset(readings);
}

asio::awaitable<void> runner::say_version(host_check& c, const std::string& program) {
  const launcher& l = on(c.host);
  const std::vector<std::string> cmd{l.program(program), "--version"};
  const auto argv = l.wrap(cmd);
  const auto o = co_await run_tracked(argv, 20s);
  if (o.exit_code == 0 && nb::version_word(o.stdout_text) != nb::version)
    c.errors.push_back(fmt::format("{} there is version {}, the harness {}: run `harness deploy`", program,
                                   nb::version_word(o.stdout_text), nb::version));
}

asio::awaitable<host_check> runner::check_host(const std::string& name, const std::set<std::string>& programs,
                                               const std::set<std::string>& peers) {
  const launcher& l = on(name);
  host_check c;
  c.host = name;
  c.address = l.target().address;
  c.launcher = to_string(l.target().launcher);
  if (const auto why = l.unreachable()) {
    c.errors.push_back(plan_.has_lab ? fmt::format("{}: run `harness lab up {}`", *why, plan_.source_path) : *why);
    co_return c;
  }
  if (auto open = l.open_argv(); !open.empty()) {
    record_command(name, open);
    const auto o = co_await run_tracked(open, std::chrono::seconds(l.target().ssh.connect_timeout + 10));
    if (o.exit_code != 0) {
      c.errors.push_back(fmt::format("ssh failed: {}", nb::first_line(o.stderr_text)));
      co_return c;
    }
  }
  c.reachable = true;
  if (c.launcher == std::string("local")) check_local_address(c);
  if (programs.count("netserve")) {
    const std::vector<std::string> cmd{l.program("netserve"), "--version"};
    const auto argv = l.wrap(cmd);
    const auto o = co_await run_tracked(argv, 20s);
    if (o.exit_code == 0) c.netserve_version = nb::version_word(o.stdout_text);
    else
      c.errors.push_back(o.timed_out ? fmt::format("'{}' gave no answer within 20 s", nb::quote_argv(argv))
                                     : fmt::format("'{}' failed ({}): {}", nb::quote_argv(argv), o.exit_code,
                                                   nb::first_line(o.stderr_text)));
  }
  for (const char* peer : {"iperf3", "netserver"})
    if (programs.count(fmt::format("stock {}", peer)))
      c.notes.push_back(
          fmt::format("peer = \"{}\": the harness starts no netserve here; a stock {} must be listening on "
                      "each test's port",
                      peer, std::string_view(peer) == "iperf3" ? "iperf3 -s" : "netserver"));
  // A server host too: a netserve starts and samples by the instant on its own clock.
  co_await ask_host(c, peers);
  co_return c;
}

asio::awaitable<void> runner::check_into(host_check& out, std::string name, std::set<std::string> programs,
                                         std::set<std::string> peers) {
  out = co_await check_host(name, programs, peers);
}

asio::awaitable<std::vector<host_check>> runner::check_all() {
  const auto runs = expand(plan_);
  const auto peers = peers_per_host(plan_, runs);
  const auto programs = programs_per_host(plan_, runs);
  std::vector<host_check> checks(programs.size());
  std::size_t pending = programs.size(), k = 0;
  std::exception_ptr failure;
  asio::steady_timer all_done(io_, std::chrono::steady_clock::time_point::max());
  for (const auto& [name, progs] : programs)
    asio::co_spawn(io_, check_into(checks[k++], name, progs, peers.at(name)), [&](std::exception_ptr e) {
      if (e && !failure) failure = e;
      if (--pending == 0) all_done.cancel();
    });
  while (pending > 0) co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
  if (failure) std::rethrow_exception(failure);
  const auto payloads = udp_payloads_per_host(plan_, runs);
  for (auto& c : checks) {
    judge(c, plan_.skew_bound_ms, opt_.allow_offset);
    if (const auto it = payloads.find(c.host); it != payloads.end()) judge_payloads(c, it->second);
    auto& env = environment_["hosts"][c.host];
    env["address"] = c.address;
    env["launcher"] = c.launcher;
    env["check"] = to_json(c);
    if (c.clock) clock_offset_ms_[c.host] = c.clock->offset_ms;
  }
  co_return checks;
}

std::string runner::start_line(double t0, const instance_spec& i) const {
  if (!opt_.allow_offset) return fmt::format("{:.6f}\n", t0);
  auto offset_s = [&](const std::string& host) {
    const auto it = clock_offset_ms_.find(host);
    return it == clock_offset_ms_.end() ? 0.0 : it->second / 1e3;
  };
  return fmt::format("{:.6f} {:.6f}\n", t0 + offset_s(i.client), t0 + offset_s(i.server));
}

asio::awaitable<void> runner::preflight() {
  const auto checks = co_await check_all();
  fmt::print(stderr, "{}", check_table(checks));
  std::size_t errors = 0;
  for (const auto& c : checks) errors += c.errors.size();
  if (errors)
    throw std::runtime_error(fmt::format("the host check found {} error(s) (above); no test was started", errors));
}

void runner::check_local_address(host_check& c) {
  asio::ip::udp::socket probe(io_);
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(c.address, ec);
  if (!ec) probe.open(addr.is_v4() ? asio::ip::udp::v4() : asio::ip::udp::v6(), ec);
  if (!ec) probe.bind({addr, 0}, ec);
  if (ec) c.errors.push_back(fmt::format("{} is not an address of this machine: {}", c.address, ec.message()));
}

asio::awaitable<std::vector<host_check>> runner::check_only() {
  std::exception_ptr failure;
  std::vector<host_check> checks;
  try {
    checks = co_await check_all();
  } catch (...) {
    failure = std::current_exception();
  }
  co_await close_launchers();  // no ssh master left for ControlPersist
  group_.close();
  if (failure) std::rethrow_exception(failure);
  co_return checks;
}

}  // namespace harness
