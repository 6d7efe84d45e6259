#include "core/base/clock.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/json/json_text.hpp"
#include "harness/report/results.hpp"
#include "harness/run/runner.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cmath>

namespace harness {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using asio::use_awaitable;
using nlohmann::json;

namespace {

constexpr auto ready_timeout = 15s;
// netload gives up connecting after 5 s and on the server's ready after 10 s; netserve waits 30 s for the start.
constexpr auto arm_timeout = 20s;

// {"event":"ready","ports":[...],"pid":N,...}; anything else is a failed start.
void take_ready_line(running_server& s, const std::string& line, std::size_t want) {
  const json j = nb::parse_json_bounded(line);
  if (j.is_discarded() || !j.is_object() || j.value("event", "") != "ready" || !j.contains("ports"))
    throw std::runtime_error(fmt::format("unexpected first line '{}'", line));
  s.ports = j.at("ports").get<std::vector<std::uint16_t>>();
  s.remote_pid = j.value("pid", 0);
  if (s.ports.size() != want)
    throw std::runtime_error(fmt::format("ready with {} ports, {} asked for", s.ports.size(), want));
}

instance_record new_instance_record(const instance_spec& spec, const launcher& client, const host& server) {
  instance_record rec;
  rec.name = spec.name;
  rec.client = spec.client;
  rec.server = spec.server;
  rec.client_address = client.target().address;
  rec.server_address = server.address;
  rec.category = spec.category;
  return rec;
}

void record_outcome(instance_record& rec, nb::process_outcome o, const std::optional<json>& result_line) {
  rec.exit_code = o.exit_code;
  rec.timed_out = o.timed_out;
  rec.stderr_text = std::move(o.stderr_text);
  if (result_line) read_result(rec, *result_line);
  else rec.error = fmt::format("no result line (exit status {}): {}", o.exit_code, rec.stderr_text.substr(0, 300));
}

interval_rates live_rates_of(const json& interval) {
  const double secs = static_cast<double>(interval.value("end_ns", 0LL) - interval.value("start_ns", 0LL)) / 1e9;
  return {nb::per_second(interval.value("sent_packets", 0ULL), secs),
          nb::bits_per_second(interval.value("sent_bytes", 0ULL), secs),
          nb::per_second(interval.value("received_packets", 0ULL), secs),
          nb::bits_per_second(interval.value("received_bytes", 0ULL), secs)};
}

}  // namespace

asio::awaitable<void> runner::start_servers(const run_spec& r, std::vector<running_server>& servers) {
  for (const server_spec& spec : r.servers) {
    const host& h = plan_.hosts.at(spec.host);
    if (h.stock_peer()) {
      if (std::find(spec.ports.begin(), spec.ports.end(), 0) != spec.ports.end())
        throw std::runtime_error(
            fmt::format("host '{}' has peer = \"{}\": its ports must be given (0 asks netserve for "
                        "any free port, and no netserve runs there)",
                        spec.host, h.peer));
      servers.push_back({spec.host, nullptr, spec.ports, 0, {}, false, true});
      continue;
    }
    const launcher& l = on(spec.host);
    auto argv = l.wrap(netserve_command(l.program("netserve"), l.target(), spec.ports));
    record_command(spec.host, argv);
    servers.push_back(
        {spec.host, std::make_unique<nb::child_process>(io_.get_executor(), argv), {}, 0, {}, false, false});
    group_.join(*servers.back().proc);
    servers_.insert(servers.back().proc.get());
  }
  for (running_server& s : servers) {
    if (!s.proc) continue;
    const std::size_t want = r.servers[static_cast<std::size_t>(&s - servers.data())].ports.size();
    auto line = co_await s.proc->read_line(std::chrono::steady_clock::now() + ready_timeout);
    try {
      if (!line) throw std::runtime_error("exited or timed out before its ready line");
      take_ready_line(s, *line, want);
      if (on(s.host).stops_remotely() && s.remote_pid > 0) remote_[s.proc.get()] = {s.host, s.remote_pid};
    } catch (const std::exception& e) {
      s.error = e.what();
    }
    if (!s.error.empty()) {
      s.proc->kill();
      auto o = co_await s.proc->finish(std::chrono::steady_clock::now() + 5s);
      s.finished = true;
      group_.leave(*s.proc);
      servers_.erase(s.proc.get());
      const std::string why = o.stderr_text.substr(0, o.stderr_text.find('\n'));
      throw std::runtime_error(
          fmt::format("netserve on host '{}' did not start: {}{}{}", s.host, s.error, why.empty() ? "" : ": ", why));
    }
  }
}

asio::awaitable<void> runner::stop_servers(std::vector<running_server>& servers) {
  for (running_server& s : servers) {
    if (s.finished) continue;
    const auto remote = remote_.find(s.proc.get());
    // Signalled there, not through its ssh client (docs/runner.md#stopping).
    if (remote != remote_.end()) s.stop_asked = co_await remote_signal(s.host, s.remote_pid, "TERM");
    if (!s.stop_asked) {
      s.proc->request_stop();
      s.stop_asked = !remote_.count(s.proc.get());  // a local program: the signal is the stop
    }
  }
  for (running_server& s : servers) {
    if (s.finished) continue;
    auto o = co_await s.proc->finish(std::chrono::steady_clock::now() + 10s);
    const bool was_remote = remote_.erase(s.proc.get()) > 0;
    group_.leave(*s.proc);
    servers_.erase(s.proc.get());
    if (o.timed_out && was_remote && !group_.killed()) co_await remote_signal(s.host, s.remote_pid, "KILL");
    // A status our own stop caused is no failure; dying before we asked, or ignoring the stop, is.
    const bool ours =
        !o.timed_out && s.stop_asked && (o.exit_code == 0 || o.exit_code == 143 || (was_remote && o.exit_code == 255));
    if (!ours && !group_.killed())
      fmt::print(stderr, "harness: netserve on '{}' ended with status {}{}: {}\n", nb::printable(s.host), o.exit_code,
                 o.timed_out ? " (killed: it did not stop)" : "", nb::printable_bounded(o.stderr_text, 300));
  }
}

asio::awaitable<void> runner::run_instances(const run_spec& r, const std::vector<running_server>& servers, json& spec,
                                            const fs::path& run_dir) {
  if (cancelled_) co_return;
  std::vector<live_instance> live(r.instances.size());
  std::size_t pending = r.instances.size();
  std::exception_ptr failure;
  asio::steady_timer tick(io_);
  asio::steady_timer wake(io_);  // armed or ended: look again
  for (std::size_t i = 0; i < r.instances.size(); ++i) {
    const running_server& server = servers.at(r.instances[i].server_index);
    asio::co_spawn(io_, run_instance(r, i, server, run_dir, live[i], wake), [&](std::exception_ptr e) {
      if (e && !failure) failure = e;
      if (--pending == 0) tick.cancel();
    });
  }
  const double t0 = co_await start_together(r, live, wake);
  spec["t0"] = t0;
  // The reports put those hosts' instants back on the harness's clock (aggregate.cpp).
  if (opt_.allow_offset) spec["clock_offsets_ms"] = clock_offset_ms_;
  write_json(run_dir / "run.json", spec);
  // A little after each interval's end from T0, when it is mostly reported.
  const auto every = std::max<std::chrono::milliseconds>(1s, std::chrono::milliseconds(std::lround(r.interval * 1e3)));
  const auto to_t0 = std::chrono::milliseconds(std::lround(std::max(0.0, t0 - nb::ns_to_s(nb::wall_ns())) * 1e3));
  live_shown_ = 0;
  tick.expires_after(to_t0 + every + 200ms);
  while (pending > 0) {
    co_await tick.async_wait(asio::as_tuple(use_awaitable));
    if (pending == 0) break;
    print_live(r, live, t0);
    tick.expires_at(tick.expiry() + every);
  }
  if (failure) std::rethrow_exception(failure);
}

// The start barrier (docs/runner.md#the-start-barrier).
asio::awaitable<double> runner::start_together(const run_spec& r, std::vector<live_instance>& live,
                                               asio::steady_timer& wake) {
  const std::size_t n = live.size();
  const auto give_up = std::chrono::steady_clock::now() + arm_timeout;
  auto settled = [](const live_instance& l) { return l.armed || !l.running; };
  while (!std::all_of(live.begin(), live.end(), settled) && std::chrono::steady_clock::now() < give_up) {
    wake.expires_at(give_up);
    co_await wake.async_wait(asio::as_tuple(use_awaitable));
  }
  const double now = nb::ns_to_s(nb::wall_ns());
  // After a stop the armed see end of file and end without sending.
  if (!cancelled_ && std::all_of(live.begin(), live.end(), [](const live_instance& l) { return l.armed; })) {
    const double t0 = now + plan_.lead + r.probe_lead();
    for (std::size_t i = 0; i < n; ++i)
      if (live[i].proc)
        live[i].proc->write_stdin(start_line(r.instances[i].probe ? t0 - r.probe_lead() : t0, r.instances[i]));
    co_return t0;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!live[i].proc) continue;
    live[i].proc->close_stdin();
    if (!live[i].armed && !cancelled_) {
      fmt::print(stderr, "harness: run {}: {} not connected within {} s\n", nb::printable(r.id),
                 nb::printable(r.instances[i].name), arm_timeout.count());
      live[i].proc->request_stop();
    }
  }
  co_return now;
}

asio::awaitable<void> runner::run_instance(const run_spec& r, std::size_t index, const running_server& server,
                                           const fs::path& run_dir, live_instance& live, asio::steady_timer& wake) {
  const instance_spec& spec = r.instances[index];
  const launcher& l = on(spec.client);
  const host& srv = plan_.hosts.at(spec.server);
  instance_record rec = new_instance_record(spec, l, srv);
  const auto port = server.ports.at(spec.port_slot);
  auto argv = l.wrap_announcing_pid(
      netload_command(l.program("netload"), r, srv, port, plan_.hosts.at(spec.client), spec.reverse, spec.probe));
  record_command(spec.client, argv);
  std::optional<json> result_line;
  json samples = json::array();
  nb::child_process* self = nullptr;
  const std::function<void(const std::string&)> on_line = [&](const std::string& line) {
    if (const auto pid = remote_pid_of(line)) {
      remote_[self] = {spec.client, *pid};
      return;
    }
    json j = nb::parse_json_bounded(line);
    if (j.is_discarded() || !j.is_object()) return;
    if (j.value("type", "") == "armed" && !live.armed) {
      live.armed = true;
      wake.cancel();
    } else if (j.value("type", "") == "interval") {
      live.intervals.push_back(live_rates_of(j));
      samples.push_back(std::move(j));
    } else if (j.value("type", "") == "result") {
      j.erase("type");
      result_line = std::move(j);
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + arm_timeout +
                        std::chrono::milliseconds(static_cast<long>((plan_.lead + r.probe_lead() + r.duration) * 1e3)) +
                        30s;
  try {
    nb::child_process p(io_.get_executor(), argv, true);
    self = &p;
    live.proc = &p;
    // cancel() and the barrier must never reach a process that is gone.
    process_group::membership member(group_, p, [this, &p, &live] {
      remote_.erase(&p);
      live.proc = nullptr;
    });
    record_outcome(rec, co_await p.finish(deadline, &on_line), result_line);
  } catch (const std::exception& e) {
    rec.error = e.what();
  }
  // What was shown live is kept beside a result with fewer samples, or none.
  if (!rec.result || !rec.result->ok || rec.result->intervals.size() < samples.size()) rec.samples = std::move(samples);
  live.running = false;
  wake.cancel();
  live.failed = !rec.error.empty() || !rec.result || !rec.result->ok;
  write_json(run_dir / (spec.name + ".json"), to_json(rec));  // measured data hits the disk first
}

}  // namespace harness
