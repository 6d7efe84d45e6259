#include "harness/report/report.hpp"
#include "harness/report/model/skew.hpp"
#include "harness/report/model/terminal.hpp"

#include "harness/report/model/circuit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace harness {

std::string text_table::text() const {
  std::vector<std::size_t> w(headers_.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size() && c < w.size(); ++c) w[c] = std::max(w[c], row[c].size());
  };
  widen(headers_);
  for (const auto& r : rows_) widen(r);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (std::size_t c = 0; c < w.size(); ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      // Text left, figures right.
      const bool left = c == 0 || cell.empty() ||
                        !(std::isdigit(static_cast<unsigned char>(cell[0])) || cell[0] == '-' || cell[0] == '+');
      out += left ? fmt::format("{:<{}}", cell, w[c]) : fmt::format("{:>{}}", cell, w[c]);
      out += c + 1 < w.size() ? "  " : "";
    }
    return out + "\n";
  };
  std::string out = line(headers_);
  std::size_t total = 0;
  for (auto x : w) total += x + 2;
  out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string text_table::markdown() const {
  auto line = [](const std::vector<std::string>& row) {
    std::string out = "|";
    for (const auto& c : row) out += " " + c + " |";
    return out + "\n";
  };
  std::string out = line(headers_) + "|";
  for (std::size_t c = 0; c < headers_.size(); ++c) out += c == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string fmt_thousands(double value, int decimals, std::string_view separator) {
  if (!std::isfinite(value)) return "n/a";
  const std::string text = fmt::format("{:.{}f}", std::fabs(value), decimals);
  const auto point = text.find('.');
  const std::string whole = text.substr(0, point);
  std::string out;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += separator;
    out += whole[i];
  }
  if (point != std::string::npos) out += text.substr(point);
  // "-0" is no figure.
  return (value < 0 && text.find_first_not_of("0.") != std::string::npos ? "-" : "") + out;
}

std::string fmt_mean_interval(const spread& s, std::string (*format)(double), std::string_view between,
                              std::string_view none) {
  if (s.n == 0) return std::string(none);
  if (!s.has_interval()) return format(s.mean);
  return fmt::format("{}{}{}", format(s.mean), between, format((s.ci_high - s.ci_low) / 2));
}

// Grouped as repeats and compare are: never "99991" beside "99 994".
std::string fmt_pps(double pps) { return fmt_thousands(pps); }
std::string fmt_mbps(double bps) { return fmt::format("{:.2f}", bps / 1e6); }

std::vector<std::string> detail_headers() {
  return {"instance",    "client -> server", "sent pps",  "recv pps",     "sent Mbit/s",
          "recv Mbit/s", "loss %",           "path loss", "kernel drops", "start +ms"};
}

bool is_tcp(const run_summary& s) { return s.run.kind == nb::test_kind::tcp_stream; }

std::vector<std::string> tcp_headers() { return {"retransmits", "RTT us", "MSS", "PMTU"}; }

namespace {

std::string opt_text(const auto& v) { return v ? fmt::format("{}", *v) : "n/a"; }

// None for a failed instance or a result without samples.
const nb::tcp_figures* tcp_of(const instance_record& i) {
  return i.problems.empty() && i.result && i.result->tcp ? &*i.result->tcp : nullptr;
}

}  // namespace

std::vector<std::string> tcp_cells(const instance_record& i) {
  const nb::tcp_figures* t = tcp_of(i);
  if (!t) return {"", "", "", ""};
  return {opt_text(t->retransmits), t->rtt_us ? fmt::format("{:.0f}", *t->rtt_us) : "n/a", opt_text(t->snd_mss),
          opt_text(t->pmtu)};
}

std::vector<std::string> tcp_sum_cells(const run_summary& s) {
  std::optional<std::uint64_t> retrans;
  std::optional<std::uint32_t> mss, pmtu;
  double rtt = 0;
  int rtts = 0;
  for (const auto& i : s.run.instances) {
    const nb::tcp_figures* t = tcp_of(i);
    if (!t) continue;
    if (t->retransmits) retrans = retrans.value_or(0) + *t->retransmits;
    if (t->rtt_us) rtt += *t->rtt_us, ++rtts;
    if (t->snd_mss) mss = std::min(mss.value_or(*t->snd_mss), *t->snd_mss);
    if (t->pmtu) pmtu = std::min(pmtu.value_or(*t->pmtu), *t->pmtu);
  }
  return {opt_text(retrans), rtts ? fmt::format("{:.0f}", rtt / rtts) : "n/a", opt_text(mss), opt_text(pmtu)};
}

std::vector<std::string> instance_cells(const instance_record& i, double t0) {
  const std::string route = i.client + " -> " + i.server;
  if (i.interrupted && (!i.problems.empty() || !i.result)) {
    const auto m = measured_until_stop(i);
    if (!m) return {i.name, route, "INTERRUPTED", "", "", "", "", "", "", i.problems.empty() ? "" : i.problems.front()};
    return {i.name,
            route,
            fmt_pps(m->sender.pps),
            fmt_pps(m->receiver.pps),
            fmt_mbps(m->sender.bps),
            fmt_mbps(m->receiver.bps),
            fmt::format("{:.3f}", loss_percent(*m)),
            "",
            "",
            fmt::format("until stop: {:.1f} s", m->seconds)};
  }
  if (!i.problems.empty() || !i.result)
    return {i.name, route, "FAILED", "", "", "", "", "", "", i.problems.empty() ? "" : i.problems.front()};
  const auto& t = *i.result;
  return {i.name,
          route,
          fmt_pps(t.sender.pps),
          fmt_pps(t.receiver.pps),
          fmt_mbps(t.sender.bits_per_second),
          fmt_mbps(t.receiver.bits_per_second),
          fmt::format("{:.3f}", t.loss.percent),
          path_text(t.loss.path, drops_known(t)),
          drops_text(t.loss.receiver_kernel_drops, drops_known(t)),
          fmt::format("{:.3f}", (t.actual_start - t0) * 1e3)};
}

std::vector<std::string> sum_cells(const run_summary& s) {
  return {"SUM",
          fmt::format("{} instances", s.run.instances.size()),
          fmt_pps(s.sender.pps),
          fmt_pps(s.receiver.pps),
          fmt_mbps(s.sender.bps),
          fmt_mbps(s.receiver.bps),
          fmt::format("{:.3f}", s.loss_percent),
          path_text(s.path_loss, s.drops_known),
          drops_text(s.kernel_drops, s.drops_known),
          fmt::format("skew {:.3f}", s.start_skew_ms)};
}

double loss_percent(const measured_part& m) {
  const auto sent = static_cast<double>(m.sender.packets), received = static_cast<double>(m.receiver.packets);
  return sent > 0 && sent >= received ? 100.0 * (sent - received) / sent : 0;
}

std::vector<std::string> until_stop_cells(const run_summary& s) {
  if (!s.measured) return {"UNTIL STOP", "no instance counted anything"};
  const measured_part& m = *s.measured;
  return {"UNTIL STOP",
          fmt::format("{} of {} instances", s.measured_instances, s.run.instances.size()),
          fmt_pps(m.sender.pps),
          fmt_pps(m.receiver.pps),
          fmt_mbps(m.sender.bps),
          fmt_mbps(m.receiver.bps),
          fmt::format("{:.3f}", loss_percent(m)),
          "",
          "",
          fmt::format("{:.1f} s", m.seconds)};
}

std::vector<std::string> steady_cells(const run_summary& s) {
  if (!s.steady) return {"STEADY", "n/a", s.steady_note};
  const auto& st = *s.steady;
  return {"STEADY",
          fmt::format("{:g} s window", st.slots * s.run.interval),
          fmt_pps(st.sender.pps),
          fmt_pps(st.receiver.pps),
          fmt_mbps(st.sender.bps),
          fmt_mbps(st.receiver.bps),
          "",
          "",
          "",
          ""};
}

text_table run_table(const run_summary& s) {
  const bool tcp = is_tcp(s);
  auto with_tcp = [&](std::vector<std::string> row, std::vector<std::string> more) {
    if (tcp) row.insert(row.end(), more.begin(), more.end());
    return row;
  };
  text_table t(with_tcp(detail_headers(), tcp_headers()));
  for (const auto& i : s.run.instances) {
    auto cells = instance_cells(i, s.run.t0);
    if (i.result && started_late(*i.result, s.run) && i.problems.empty()) cells.back() += " LATE";
    t.add(with_tcp(std::move(cells), tcp_cells(i)));
  }
  if (s.ok) {
    t.add(with_tcp(sum_cells(s), tcp_sum_cells(s)));
    t.add(steady_cells(s));
  }
  if (s.run.interrupted) t.add(until_stop_cells(s));
  return t;
}

std::string limit_words(const run_summary& s) {
  if (!s.limit) return {};
  const std::string run_loss =
      s.lost == 0 ? fmt::format("no loss of {} sent", s.sender.packets)
                  : fmt::format("{} of {} sent lost ({:.2f} %: {} on the path, {} by the receiving sockets)", s.lost,
                                s.sender.packets, s.loss_percent, path_text(s.path_loss, s.drops_known),
                                s.drops_known ? std::to_string(s.kernel_drops) : std::string("unknown"));
  if (s.limit_by_circuit)
    return fmt::format(
        "{} (the circuit's counters; {} of {} instances' own verdicts say so too); the run, summed over "
        "its instances: {}; {}",
        s.limit->limit, s.limit_votes, s.run.instances.size(), run_loss, s.limit->text);
  return fmt::format("{} ({} of {} instances); the run, summed over its instances: {}; instance {}'s own verdict: {}",
                     s.limit->limit, s.limit_votes, s.run.instances.size(), run_loss, s.limit_instance, s.limit->text);
}

std::string until_stop_words(const run_summary& s) {
  if (!s.run.interrupted) return {};
  std::string out = s.run.duration > 0 ? fmt::format("Interrupted after {:.1f} s of the run's {:g} s.",
                                                     s.run.measured_s, s.run.duration)
                                       : fmt::format("Interrupted after {:.1f} s.", s.run.measured_s);
  if (!s.measured) return out + " No instance had counted anything by then.";
  const measured_part& m = *s.measured;
  return out + fmt::format(
                   " Until the stop, {} of {} instances counted {} packets sent and {} received ({} pps and {} "
                   "pps, {} and {} Mbit/s, summed over them; {:.3f} % not received, which includes what was in "
                   "flight at the stop). Partial figures: this run has no sum, steady state or limit.",
                   s.measured_instances, s.run.instances.size(), m.sender.packets, m.receiver.packets,
                   fmt_pps(m.sender.pps), fmt_pps(m.receiver.pps), fmt_mbps(m.sender.bps), fmt_mbps(m.receiver.bps),
                   loss_percent(m));
}

std::string circuit_words(const run_summary& s) {
  const auto c = circuit_of(s.run);
  if (!c) return {};
  std::string out = fmt::format(
      "Circuit (emulated): its packet-rate limit dropped {} packets and its bit-rate shaper {}; "
      "the receiving hosts' kernels delivered {} UDP datagrams.",
      c->limit_dropped, c->shaper_dropped, c->udp_delivered);
  // Only a whole run's sums compare with the circuit's whole-run counts.
  if (!s.ok || s.sender.packets < s.receiver.packets) return out;
  const std::uint64_t lost = s.sender.packets - s.receiver.packets;
  if (circuit_holds_loss(s))
    out += fmt::format(
        " Sent - received = {}: those are the circuit's drops (its counts also include the tests' "
        "control packets).",
        lost);
  else if (lost > 0)
    out += fmt::format(
        " Sent - received = {}: the circuit dropped less than half of it, the rest was lost "
        "elsewhere (the limit says where).",
        lost);
  return out;
}

std::string console_summary(const std::vector<run_summary>& given, const std::vector<nlohmann::json>& found) {
  std::vector<run_summary> runs;
  std::vector<nlohmann::json> searches;
  for (const auto& s : given) runs.push_back(for_terminal(s));
  for (const auto& s : found) searches.push_back(for_terminal(s));
  std::string out;
  for (const auto& s : runs) {
    if (is_search_trial(s.run)) continue;
    out += fmt::format("\n{}  [{} {} -m {}, {}]{}\n", s.run.id, s.run.role, nb::to_string(s.run.kind),
                       s.run.message_size, to_string(s.run.topo), s.ok && !s.skewed() ? "" : "  " + run_state(s));
    out += run_table(s).text();
    for (const auto& f : s.failures) out += fmt::format("  failure: {}\n", f);
    if (s.skewed()) out += fmt::format("  SKEWED: {}; its figures count\n", late_words(s));
    for (const auto& m : s.target_misses) out += fmt::format("  TARGET MISSED {}\n", m);
    if (s.limit) out += fmt::format("  limit: {}\n", limit_words(s));
  }
  text_table overview({"run", "role", "m", "sent pps", "recv pps", "sent Mbit/s", "recv Mbit/s", "steady recv pps",
                       "steady recv Mbit/s", "loss %", "skew ms", "state"});
  for (const auto& s : runs) {
    if (is_search_trial(s.run)) continue;
    if (s.run.interrupted && s.measured) {  // the state says so
      const measured_part& m = *s.measured;
      overview.add({s.run.id, s.run.role, std::to_string(s.run.message_size), fmt_pps(m.sender.pps),
                    fmt_pps(m.receiver.pps), fmt_mbps(m.sender.bps), fmt_mbps(m.receiver.bps), "n/a", "n/a",
                    fmt::format("{:.3f}", loss_percent(m)), "n/a", run_state(s)});
      continue;
    }
    if (!s.ok) {
      overview.add({s.run.id, s.run.role, std::to_string(s.run.message_size), "FAILED", "", "", "", "", "", "", "",
                    run_state(s)});
      continue;
    }
    overview.add({s.run.id, s.run.role, std::to_string(s.run.message_size), fmt_pps(s.sender.pps),
                  fmt_pps(s.receiver.pps), fmt_mbps(s.sender.bps), fmt_mbps(s.receiver.bps),
                  s.steady ? fmt_pps(s.steady->receiver.pps) : "n/a",
                  s.steady ? fmt_mbps(s.steady->receiver.bps) : "n/a", fmt::format("{:.3f}", s.loss_percent),
                  fmt::format("{:.3f}", s.start_skew_ms), s.skewed() ? "SKEWED" : "ok"});
  }
  if (!overview.empty())
    out += "\nSummary (sum over instances; steady = every instance sending, after warm-up)\n" + overview.text();
  return out + repeats_console(runs) + search_console(searches);
}

std::string csv_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string summary_csv(const std::vector<run_summary>& runs, const std::vector<unrun>& not_run) {
  std::string out =
      "run,test,role,topology,kind,message_size,instance,client,server,category,ok,sent_packets,received_packets,"
      "sent_pps,received_pps,sent_bps,received_bps,loss_packets,path_loss,kernel_drops,start_offset_ms,late\n";
  const auto quote = csv_quote;
  for (const auto& s : runs) {
    const auto& r = s.run;
    const std::string head = fmt::format("{},{},{},{},{},{}", quote(r.id), quote(r.test), quote(r.role),
                                         to_string(r.topo), nb::to_string(r.kind), r.message_size);
    for (const auto& i : r.instances) {
      out += fmt::format("{},{},{},{},{},{}", head, quote(i.name), quote(i.client), quote(i.server), quote(i.category),
                         i.problems.empty() ? "true" : "false");
      if (!i.problems.empty() || !i.result) {
        out += ",,,,,,,,,,,\n";  // a failed instance has no figures, never zeros
        continue;
      }
      const auto& t = *i.result;
      out +=
          fmt::format(",{},{},{:.3f},{:.3f},{:.1f},{:.1f},{},{},{},{:.3f},{}\n", t.sender.packets, t.receiver.packets,
                      t.sender.pps, t.receiver.pps, t.sender.bits_per_second, t.receiver.bits_per_second,
                      t.loss.packets, t.loss.path, drops_known(t) ? std::to_string(t.loss.receiver_kernel_drops) : "",
                      (t.actual_start - r.t0) * 1e3, started_late(t, r));
    }
    if (!s.ok) continue;
    out +=
        fmt::format("{},\"SUM\",,,,true,{},{},{:.3f},{:.3f},{:.1f},{:.1f},{},{},{},{:.3f},{}\n", head, s.sender.packets,
                    s.receiver.packets, s.sender.pps, s.receiver.pps, s.sender.bps, s.receiver.bps, s.lost, s.path_loss,
                    s.drops_known ? std::to_string(s.kernel_drops) : "", s.max_start_offset_ms, s.skewed());
    if (s.steady)
      out += fmt::format("{},\"STEADY\",,,,true,{},{},{:.3f},{:.3f},{:.1f},{:.1f},,,,,\n", head,
                         s.steady->sender.packets, s.steady->receiver.packets, s.steady->sender.pps,
                         s.steady->receiver.pps, s.steady->sender.bps, s.steady->receiver.bps);
  }
  // Only the name is known: every figure column empty, never a zero.
  const auto columns = std::count(out.begin(), out.begin() + static_cast<long>(out.find('\n')), ',') + 1;
  for (const auto& u : not_run)
    out += fmt::format("{},,,,,,{},,,,false{}\n", csv_quote(u.id), csv_quote("NOT RUN: " + u.why),
                       std::string(static_cast<std::size_t>(columns - 11), ','));
  return out + repeats_csv(runs);
}

}  // namespace harness
