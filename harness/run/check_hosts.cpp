// The runner's check of every host before a run (and all of `harness check`): host_check.hpp says what
// and why; this is the asking.
#include "harness/run/host_check.hpp"
#include "harness/run/runner.hpp"

#include "core/clock.hpp"
#include "core/host_info.hpp"
#include "core/version.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

namespace harness {

using namespace std::chrono_literals;

namespace {

constexpr int clock_exchanges = 8;

std::string first_line_of(const std::string& s) {
  const auto line = s.substr(0, s.find('\n'));
  const auto b = line.find_first_not_of(" \t\r");
  return b == std::string::npos ? std::string() : line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
}

// The last word of "netserve 0.3.0".
std::string version_in(const std::string& out) {
  const std::string line = first_line_of(out);
  const auto space = line.find_last_of(' ');
  return space == std::string::npos ? line : line.substr(space + 1);
}

// The hosts a plan's runs use, and which of our programs each needs.
std::map<std::string, std::set<std::string>> programs_per_host(const std::vector<run_spec>& runs) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& r : runs) {
    for (const auto& s : r.servers) out[s.host].insert("netserve");
    for (const auto& i : r.instances) out[i.client].insert("netload");
  }
  return out;
}

}  // namespace

// netload --host-info on the host: its facts, then clock_exchanges clock readings over the same channel.
asio::awaitable<void> runner::ask_host(host_check& c, const std::set<std::string>& peers, bool needs_netload) {
  const launcher& l = on(c.host);
  std::vector<std::string> cmd{l.program("netload"), "--host-info"};
  for (const auto& p : peers) cmd.insert(cmd.end(), {"--mtu-to", p});
  const auto argv = l.wrap_announcing_pid(cmd);
  record_command(c.host, argv);
  if (cancelled_) throw std::runtime_error("interrupted");
  nb::child_process p(io_.get_executor(), argv, true);
  active_.insert(&p);
  struct forget {  // cancel() must never reach a process that is gone
    std::set<nb::child_process*>& active;
    nb::child_process* p;
    ~forget() { active.erase(p); }
  } guard{active_, &p};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(l.target().ssh.connect_timeout + 15);
  std::optional<std::string> line = co_await p.read_line(deadline);
  if (line && remote_pid_of(*line)) line = co_await p.read_line(deadline);
  if (line) c.facts = nlohmann::json::parse(*line, nullptr, false);
  if (c.facts.is_object() && c.facts.value("type", "") == "host_info") {
    c.netload_version = c.facts.value("version", "");
    std::vector<clock_reading> readings;
    for (int i = 0; i < clock_exchanges; ++i) {
      clock_reading r;
      r.asked_ns = nb::wall_ns();
      if (!p.write_stdin("\n")) break;
      const auto reply = co_await p.read_line(deadline);
      r.answered_ns = nb::wall_ns();
      if (!reply || (r.host_ns = nb::parse_clock_reply(*reply)) < 0) break;
      readings.push_back(r);
    }
    c.clock = estimate_offset(readings);
  }
  p.close_stdin();
  const auto o = co_await p.finish(deadline);
  if (cancelled_) throw std::runtime_error("interrupted");
  if (c.facts.is_object() && c.facts.value("type", "") == "host_info") co_return;
  const std::string why = fmt::format("'{}' failed ({}): {}", nb::quote_argv(argv), o.exit_code,
                                      first_line_of(o.stderr_text.empty() ? o.stdout_text : o.stderr_text));
  // A host that only serves starts nothing at T0: without netload there it lacks the facts, not a start.
  if (needs_netload)
    c.errors.push_back(why);
  else
    c.notes.push_back(fmt::format("no facts or clock offset (it runs only netserve, which needs no start instant): {}", why));
}

asio::awaitable<host_check> runner::check_host(const std::string& name, const std::set<std::string>& programs,
                                               const std::set<std::string>& peers) {
  const launcher& l = on(name);
  host_check c;
  c.host = name;
  c.address = l.target().address;
  c.launcher = to_string(l.target().launcher);
  if (auto open = l.open_argv(); !open.empty()) {
    record_command(name, open);
    const auto o = co_await run_tracked(open, std::chrono::seconds(l.target().ssh.connect_timeout + 10));
    if (o.exit_code != 0) {
      c.errors.push_back(fmt::format("ssh failed: {}", first_line_of(o.stderr_text)));
      co_return c;
    }
  }
  c.reachable = true;
  if (programs.count("netserve")) {
    const std::vector<std::string> cmd{l.program("netserve"), "--version"};
    const auto argv = l.wrap(cmd);
    const auto o = co_await run_tracked(argv, 20s);
    if (o.exit_code == 0)
      c.netserve_version = version_in(o.stdout_text);
    else
      c.errors.push_back(fmt::format("'{}' failed ({}): {}", nb::quote_argv(argv), o.exit_code, first_line_of(o.stderr_text)));
  }
  co_await ask_host(c, peers, programs.count("netload") > 0);
  co_return c;
}

asio::awaitable<void> runner::check_into(host_check& out, std::string name, std::set<std::string> programs,
                                        std::set<std::string> peers) {
  out = co_await check_host(name, programs, peers);
}

// Every host at once: over ssh each costs a few round trips and process starts, which add up over nine.
asio::awaitable<std::vector<host_check>> runner::check_all() {
  const auto runs = expand(plan_);
  const auto peers = peers_per_host(plan_, runs);
  const auto programs = programs_per_host(runs);
  std::vector<host_check> checks(programs.size());
  std::size_t pending = programs.size(), k = 0;
  std::exception_ptr failure;
  asio::steady_timer all_done(io_, std::chrono::steady_clock::time_point::max());  // each check has its deadlines
  for (const auto& [name, progs] : programs)
    asio::co_spawn(io_, check_into(checks[k++], name, progs, peers.at(name)), [&](std::exception_ptr e) {
      if (e && !failure) failure = e;
      if (--pending == 0) all_done.cancel();
    });
  while (pending > 0) co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
  if (failure) std::rethrow_exception(failure);
  for (auto& c : checks) {
    judge(c, plan_.skew_bound_ms, opt_.allow_offset);
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
  for (const auto& [name, l] : launchers_) {
    const host& h = l->target();
    if (h.launcher != launcher_kind::local) continue;
    // The plan's address must be one this machine can use (127.0.0.x always is).
    asio::ip::udp::socket probe(io_);
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(h.address, ec);
    if (!ec) probe.open(addr.is_v4() ? asio::ip::udp::v4() : asio::ip::udp::v6(), ec);
    if (!ec) probe.bind({addr, 0}, ec);
    if (ec) throw std::runtime_error(fmt::format("host '{}': {} is not an address of this machine: {}", name, h.address, ec.message()));
  }
  const auto checks = co_await check_all();
  fmt::print(stderr, "{}", check_table(checks));
  std::size_t errors = 0;
  for (const auto& c : checks) errors += c.errors.size();
  if (errors)
    throw std::runtime_error(fmt::format("the host check found {} error(s) (above); no test was started", errors));
}

}  // namespace harness
