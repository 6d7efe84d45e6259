// report.md; `pairs` as the tutorial's from -> to -> bandwidth -> category.
#include "harness/records/host_check.hpp"
#include "harness/report/model/skew.hpp"
#include "harness/report/report.hpp"
#include "harness/report/results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace harness {
namespace {

std::string overview(const std::vector<run_summary>& runs) {
  text_table t({"role", "test", "kind", "m (bytes)", "sent pps", "received pps", "sent Mbit/s", "received Mbit/s",
                "steady received pps", "steady received Mbit/s", "loss % (path / kernel drops)", "start skew ms",
                "limit"});
  for (const auto& s : runs) {
    if (s.run.topo == topology::pairs || is_search_trial(s.run)) continue;
    if (s.run.interrupted && s.measured) {  // marked as such
      const measured_part& m = *s.measured;
      t.add({s.run.role, s.run.test, std::string(nb::to_string(s.run.kind)), std::to_string(s.run.message_size),
             fmt_pps(m.sender.pps), fmt_pps(m.receiver.pps), fmt_mbps(m.sender.bps), fmt_mbps(m.receiver.bps), "n/a",
             "n/a", fmt::format("{:.3f}", loss_percent(m)), "n/a", fmt::format("**{}**", run_state(s))});
      continue;
    }
    if (!s.ok) {
      t.add({s.run.role, s.run.test, std::string(nb::to_string(s.run.kind)), std::to_string(s.run.message_size),
             fmt::format("**{}**", run_state(s)), "", "", "", "", "", "", ""});
      continue;
    }
    t.add({s.run.role, s.run.test, std::string(nb::to_string(s.run.kind)), std::to_string(s.run.message_size),
           fmt_pps(s.sender.pps), fmt_pps(s.receiver.pps), fmt_mbps(s.sender.bps), fmt_mbps(s.receiver.bps),
           s.steady ? fmt_pps(s.steady->receiver.pps) : "n/a", s.steady ? fmt_mbps(s.steady->receiver.bps) : "n/a",
           fmt::format("{:.3f} ({} / {})", s.loss_percent, path_text(s.path_loss, s.drops_known),
                       drops_text(s.kernel_drops, s.drops_known)),
           fmt::format("{:.3f}{}", s.start_skew_ms, s.skewed() ? " **SKEWED**" : ""), s.limit ? s.limit->limit : ""});
  }
  return t.empty() ? "" : "## Every run\n\n" + t.markdown() + "\n";
}

// The PPS and BPS tests of a role side by side, one column per message size.
std::string by_role(const std::vector<run_summary>& runs) {
  std::vector<std::string> roles;
  std::vector<std::uint32_t> sizes;
  for (const auto& s : runs) {
    if (s.run.topo == topology::pairs || is_search_trial(s.run)) continue;
    if (std::find(roles.begin(), roles.end(), s.run.role) == roles.end()) roles.push_back(s.run.role);
    if (std::find(sizes.begin(), sizes.end(), s.run.message_size) == sizes.end()) sizes.push_back(s.run.message_size);
  }
  std::vector<std::string> headers{"role"};
  for (auto m : sizes) headers.push_back(fmt::format("-m {}: received pps (sum / steady)", m));
  for (auto m : sizes) headers.push_back(fmt::format("-m {}: received Mbit/s (sum / steady)", m));
  text_table t(headers);
  for (const auto& role : roles) {
    std::vector<std::string> pps_cells, bps_cells;
    for (auto m : sizes) {
      std::string pps, bps;
      for (const auto& s : runs) {
        if (s.run.role != role || s.run.message_size != m || s.run.topo == topology::pairs || is_search_trial(s.run))
          continue;
        const std::string sep = pps.empty() ? "" : "; ";
        const char* state = s.run.interrupted ? "interrupted" : "FAILED";
        pps += sep + (s.ok ? fmt::format("{} / {}", fmt_pps(s.receiver.pps),
                                         s.steady ? fmt_pps(s.steady->receiver.pps) : "n/a")
                           : state);
        bps += sep + (s.ok ? fmt::format("{} / {}", fmt_mbps(s.receiver.bps),
                                         s.steady ? fmt_mbps(s.steady->receiver.bps) : "n/a")
                           : state);
      }
      pps_cells.push_back(pps);
      bps_cells.push_back(bps);
    }
    std::vector<std::string> row{role};
    row.insert(row.end(), pps_cells.begin(), pps_cells.end());
    row.insert(row.end(), bps_cells.begin(), bps_cells.end());
    t.add(row);
  }
  return t.empty() ? "" : "## By role: PPS and BPS side by side\n\n" + t.markdown() + "\n";
}

std::string pairs_table(const std::vector<run_summary>& runs) {
  // TCP pairs: retransmits, RTT, MSS and path MTU (the seed procedure's MTU step).
  const bool tcp = std::any_of(runs.begin(), runs.end(),
                               [](const run_summary& s) { return s.run.topo == topology::pairs && is_tcp(s); });
  std::vector<std::string> headers{"from",        "to",    "bandwidth (Mbit/s received)", "category", "test",
                                   "sent Mbit/s", "loss %"};
  if (tcp) headers.insert(headers.end(), {"retransmits", "RTT us", "MSS", "PMTU"});
  text_table t(headers);
  for (const auto& s : runs) {
    if (s.run.topo != topology::pairs) continue;
    for (const auto& i : s.run.instances) {
      std::vector<std::string> row;
      const auto [from, to] = data_route(s.run, i);
      if (!s.ok || !i.result) row = {from, to, "**FAILED**", i.category, s.run.id, "", ""};
      else
        row = {from,
               to,
               fmt_mbps(i.result->receiver.bits_per_second),
               i.category,
               s.run.id,
               fmt_mbps(i.result->sender.bits_per_second),
               fmt::format("{:.3f}", i.result->loss.percent)};
      if (tcp) {
        const auto cells = is_tcp(s) && s.ok ? tcp_cells(i) : std::vector<std::string>(4);
        row.insert(row.end(), cells.begin(), cells.end());
      }
      t.add(std::move(row));
    }
  }
  return t.empty() ? "" : "## Pairs: from -> to -> bandwidth -> category\n\n" + t.markdown() + "\n";
}

// Receivers counting at their driver (netserve --engine xdp), and what their sockets got.
std::string engine_note(const run_summary& s) {
  std::vector<std::string> at_driver;
  std::uint64_t socket = 0;
  for (const auto& i : s.run.instances)
    if (i.result && i.result->socket_received) {
      at_driver.push_back(fmt::format("{} ({})", i.name, i.result->receive_engine));
      socket += i.result->socket_received->first;
    }
  if (at_driver.empty()) return {};
  return fmt::format(
      "Counted at the receiving interface's driver (XDP), not by the receiving socket: {}. Their socket "
      "paths counted {} datagrams besides.\n",
      fmt::join(at_driver, ", "), socket);
}

std::string latency_notes(const run_summary& s) {
  std::string out;
  if (s.rr)
    out += fmt::format(
        "Transactions: {} ({:.1f} per second, all instances), {} given up unanswered. Round trips, "
        "every instance merged: {}.\n",
        s.rr->transactions, s.rr->transactions_per_second, s.rr->timeouts, latency_words(s.rr->latency));
  if (!s.probe) return out;
  const probe_summary& p = *s.probe;
  if (!p.error.empty()) return out + fmt::format("- **latency probe failed**: {}\n", p.error);
  out += fmt::format(
      "Latency probe (UDP_RR, {:g} per second, {} bytes each way, from {:g} s before T0 on the first "
      "instance's path): idle {}; under the load (steady part) {}.",
      p.pps, p.size, p.idle_s, latency_words(p.idle), latency_words(p.loaded));
  if (p.idle.count() && p.loaded.count())
    out += fmt::format(
        " The load added {:.1f} µs at p50 and {:.1f} µs at p99.",
        (static_cast<double>(p.loaded.percentile_ns(50)) - static_cast<double>(p.idle.percentile_ns(50))) / 1e3,
        (static_cast<double>(p.loaded.percentile_ns(99)) - static_cast<double>(p.idle.percentile_ns(99))) / 1e3);
  if (p.timeouts) out += fmt::format(" {} probe transactions were given up (lost).", p.timeouts);
  return out + "\n";
}

std::string run_section(const run_summary& s) {
  std::string out = fmt::format("### {}\n\n{}, {} -m {}, topology {}, T0 {:.6f}{}\n\n", s.run.id, s.run.role,
                                nb::to_string(s.run.kind), s.run.message_size, to_string(s.run.topo), s.run.t0,
                                s.ok && !s.skewed() ? "" : fmt::format(" — **{}**", run_state(s)));
  out += run_table(s).markdown() + "\n";
  if (const auto with = s.run.spec.find("together_with"); with != s.run.spec.end())
    out += fmt::format("- both ways at once: these rows ran at the same instant as run {} (one T0)\n",
                       with->get<std::string>());
  for (const auto& f : s.failures) out += fmt::format("- failure: {}\n", f);
  if (s.skewed()) out += fmt::format("- **SKEWED**: {}; its figures count, and are summed\n", late_words(s));
  for (const auto& m : s.target_misses) out += fmt::format("- **TARGET MISSED** {}\n", m);
  for (const auto& i : s.run.instances)  // netload's own caveats
    if (i.result && !i.result->loss.note.empty()) out += fmt::format("- {}: {}\n", i.name, i.result->loss.note);
  out += engine_note(s);
  out += latency_notes(s);
  if (s.run.interrupted) out += until_stop_words(s) + "\n";
  if (s.ok) {
    out += fmt::format("Start skew (latest - earliest actual start): {:.3f} ms; latest start {:.3f} ms after T0.\n",
                       s.start_skew_ms, s.max_start_offset_ms);
    if (s.lost && s.drops_known)
      out += fmt::format("Loss: {} packets, {} on the path and {} dropped by the receiving socket's kernel buffer.\n",
                         s.lost, s.path_loss, s.kernel_drops);
    else if (s.lost)
      out += fmt::format(
          "Loss: {} packets; how many the receiving socket dropped is unknown (its kernel has no "
          "SO_MEMINFO), so at most {} on the path.\n",
          s.lost, s.path_loss);
    if (const auto circuit = circuit_words(s); !circuit.empty()) out += circuit + "\n";
    if (s.limit) out += fmt::format("**Limit**: {}\n", limit_words(s));
    if (s.steady)
      out += fmt::format(
          "Steady state: {} per-second samples per instance in which every instance was sending, "
          "after the warm-up.\n",
          s.steady->slots);
  }
  return out + "\n";
}

std::string not_run_markdown(const std::vector<unrun>& not_run) {
  if (not_run.empty()) return "";
  std::string out = "## Not run\n\n";
  for (const auto& u : not_run) out += fmt::format("- {}: **not run**: {}\n", u.id, u.why);
  return out + "\n";
}

// As `harness check` printed it.
std::string hosts_markdown(const std::filesystem::path& dir) {
  const auto env = read_environment(dir);  // a file from disk: anything may be in it
  if (!env.contains("hosts") || !env["hosts"].is_object()) return "";
  std::vector<host_check> checks;
  for (const auto& [name, h] : env["hosts"].items())
    if (h.contains("check"))
      checks.push_back(host_check_from_json(
          h["check"], fmt::format("{}: host '{}': check", (dir / "environment.json").string(), name)));
  if (checks.empty()) return "";
  return "## Hosts, as checked before the runs\n\nClock offset: the host's wall clock minus the harness's, measured "
         "over the ssh channel as NTP does (+- its bound).\n\n```\n" +
         check_table(checks) + "```\n\n";
}

}  // namespace

std::string report_markdown(const std::vector<run_summary>& runs, const std::vector<nlohmann::json>& searches,
                            const std::filesystem::path& dir) {
  std::string out = fmt::format("# Results: {}\n\n", dir.filename().string());
  if (const std::string banner = interrupted_banner(dir); !banner.empty()) out += "**Interrupted**: " + banner + "\n\n";
  out +=
      "Sent = what the netload instances sent; received = what netserve counted. The sum is the plain sum of "
      "the per-instance figures (what the procedure adds up by hand); steady is the aggregate over the "
      "wall-clock window in which every instance was sending, after the warm-up.\n\n";
  out += by_role(runs) + overview(runs) + not_run_markdown(runs_not_run(dir, true)) + repeats_markdown(runs) +
         pairs_table(runs) + search_markdown(searches) + hosts_markdown(dir);
  out += "## Runs\n\n";
  for (const auto& s : runs)
    if (!is_search_trial(s.run)) out += run_section(s);
  return out;
}

}  // namespace harness
