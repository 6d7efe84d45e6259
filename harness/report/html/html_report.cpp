// report.html: the curves and repeats first, then searches, pairs, each run with its charts, hosts, the
// environment and the plan.
#include "harness/records/host_check.hpp"
#include "harness/report/html/html.hpp"
#include "harness/report/model/skew.hpp"
#include "harness/report/report.hpp"
#include "harness/report/results.hpp"
#include "harness/report/search_view.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness {
namespace {

using nlohmann::json;
namespace h = html;

// Ids c1, c2, ... in page order prefix each SVG's own ids.
struct chart_ids {
  int next = 0;
  std::vector<std::string> errors;
  std::string operator()() { return fmt::format("c{}", ++next); }
  std::string place(const chart& c) {
    if (c.svg.empty()) errors.push_back(fmt::format("{}: {}", c.name, c.error));
    return h::figure(c);
  }
};

std::string percent(double v) { return fmt::format("{:.3f}{}%", v, "\u00a0"); }
std::string count(std::uint64_t v) { return h::grouped(static_cast<double>(v)); }

std::string counted(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string page_header(const std::vector<run_summary>& runs, std::size_t searches, const std::filesystem::path& dir,
                        const json& env) {
  std::size_t shown = 0, failed = 0, interrupted = 0, skewed = 0;
  for (const auto& s : runs)
    if (!is_search_trial(s.run)) {
      ++shown;
      interrupted += s.run.interrupted;
      failed += !s.ok && !s.run.interrupted;
      skewed += s.skewed();
    }
  std::vector<std::string> what;
  if (shown || !searches) what.push_back(counted(shown, "run", "runs"));
  if (searches) what.push_back(counted(searches, "rate search", "rate searches"));
  std::string state;
  if (interrupted) state += fmt::format("<span class=\"bad\">{} interrupted</span>", interrupted);
  if (failed) state += fmt::format("{}<span class=\"bad\">{} failed</span>", state.empty() ? "" : ", ", failed);
  if (skewed) state += fmt::format("{}<span class=\"bad\">{} skewed</span>", state.empty() ? "" : ", ", skewed);
  if (state.empty())
    state = shown ? (shown == 1 ? "<span class=\"good\">ok</span>" : "<span class=\"good\">every one ok</span>") : "";
  std::string out = fmt::format("<h1>Results: {}</h1>\n", h::escape(h::folder_name(dir)));
  if (const std::string banner = interrupted_banner(dir); !banner.empty())
    out += fmt::format("<p class=\"banner\"><b>Interrupted</b>: {}</p>\n", h::escape(banner));
  out += fmt::format("<p class=\"lede\">Plan <b>{}</b>, harness {}, {}{}.</p>\n",
                     h::escape(env.value("plan", std::string("?"))),
                     h::escape(env.value("harness_version", std::string("?"))), fmt::join(what, " and "),
                     state.empty() ? "" : ": " + state);
  auto problems = folder_problems(dir, runs);
  for (auto& k : folder_skews(runs)) problems.push_back(std::move(k));
  if (!problems.empty()) {
    out += "<ul class=\"problems\">\n";
    for (const auto& p : problems) out += fmt::format("<li>{}</li>\n", h::escape(p));
    out += "</ul>\n";
  }
  return out +
         "<p class=\"note\">Sent: what the netload instances sent; received: what netserve counted; PPS = "
         "packets / duration per instance, summed over the instances. With repeats, each figure is the mean "
         "± the half-width of its 95 % confidence interval (Student's t).</p>\n";
}

// "1 failed", "2 failed, 1 interrupted".
std::string not_ok(const repeat_group& g) {
  const int failed = g.failed - g.interrupted;
  if (!g.interrupted) return fmt::format("{} failed", failed);
  return failed ? fmt::format("{} failed, {} interrupted", failed, g.interrupted)
                : fmt::format("{} interrupted", g.interrupted);
}

std::string sweep_section(const std::vector<repeat_group>& groups, chart_ids& ids) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : groups) {
    if (g.topo == topology::pairs) continue;
    std::vector<std::string> row{h::escape(g.role),
                                 h::escape(g.test),
                                 std::string(nb::to_string(g.kind)),
                                 std::to_string(g.message_size),
                                 h::escape(g.load.empty() ? "unpaced" : g.load),
                                 g.failed
                                     ? fmt::format("{} <span class=\"bad\">({})</span>", g.received_pps.n, not_ok(g))
                                     : std::to_string(g.received_pps.n)};
    if (g.received_pps.n == 0) {
      row.push_back(g.interrupted == g.failed ? "<span class=\"bad\">interrupted</span>"
                                              : "<span class=\"bad\">FAILED</span>");
    } else {
      row.insert(row.end(), {h::with_interval(g.received_pps, h::pps), h::with_interval(g.received_bps, h::mbps),
                             h::with_interval(g.sent_pps, h::pps), h::with_interval(g.sent_bps, h::mbps),
                             g.received_pps.has_interval()
                                 ? fmt::format("{} – {}", h::pps(g.received_pps.min), h::pps(g.received_pps.max))
                                 : "",
                             percent(g.loss_percent.mean)});
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return "";
  std::string out = "<h2>Received and sent against message size</h2>\n";
  for (auto metric : {sweep_metric::pps, sweep_metric::mbps})
    if (auto c = sweep_chart(groups, metric, ids())) out += ids.place(*c);
  return out + h::table({"role", "test", "kind", "m (bytes)", "offered per instance", "runs", "received pps",
                         "received Mbit/s", "sent pps", "sent Mbit/s", "received pps min – max", "loss (mean)"},
                        rows);
}

std::vector<std::vector<std::string>> goal_rows(const json& sr) {
  std::vector<std::vector<std::string>> rows;
  if (const json& mrr = sr.at("mrr"); mrr.is_object() && mrr.value("ran", false))
    rows.push_back({"MRR (unpaced)", "received " + h::pps(number_or(mrr, "forwarding_rate")), "", "",
                    "offered " + h::pps(number_or(mrr, "offered_rate")) + " (the maximal load)"});
  for (const json& r : sr.at("goal_results")) {
    const std::string result = regularity(r);
    rows.push_back({h::escape(goal_words(r.at("goal"))), h::escape(load_cell(r, "relevant_lower_bound")),
                    h::escape(load_cell(r, "relevant_upper_bound")),
                    h::escape(load_cell(r, "conditional_throughput")) + " " +
                        h::escape(mbps_cell(r, "conditional_throughput_bits_per_second")),
                    result == "regular" ? result : "<span class=\"bad\">" + h::escape(result) + "</span>"});
  }
  return rows;
}

std::string latency_steps_html(const json& sr) {
  std::vector<std::vector<std::string>> rows;
  for (const json& l : sr.value("latency", json::array())) {
    std::vector<std::string> row{
        h::escape(l.value("name", "")),
        h::pps(number_or(l, "intended_load")) + " (" + h::pps(number_or(l, "intended_load_per_instance")) + " each)"};
    if (l.contains("error")) {
      row.insert(row.end(),
                 {"<span class=\"bad\">FAILED: " + h::escape(l.value("error", "")) + "</span>", "", "", "", "", ""});
    } else {
      row.push_back(fmt::format("{:.6f}", number_or(l, "loss_ratio")));
      for (const char* p : {"p50_us", "p90_us", "p99_us", "p999_us", "max_us"})
        row.push_back(fmt::format("{:.1f}", number_or(l.at("latency"), p)));
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return "";
  return "<p>Latency under load: the probe's round trips in µs at fractions of the PDR's conditional throughput.</p>\n" +
         h::table({"load", "intended load", "loss ratio", "p50", "p90", "p99", "p99.9", "max"}, rows);
}

std::string search_section(const std::vector<json>& searches, chart_ids& ids) {
  if (searches.empty()) return "";
  std::string out =
      "<h2>Rate search (MLRsearch, RFC 9971)</h2>\n<p class=\"note\">Per search goal: the relevant lower "
      "bound, the relevant upper bound and the conditional throughput (the forwarding rate at the lower "
      "bound). Loads are the aggregate intended load over the instances, split equally, per instance in "
      "brackets. A result is regular when both bounds exist within the goal width.</p>\n";
  for (const json& s : searches) {
    const json& sr = s.at("search");
    out += fmt::format("<h3>{}: {}, {} -m {}</h3>\n", h::escape(s.at("id").get<std::string>()),
                       h::escape(s.at("role").get<std::string>()), h::escape(s.at("kind").get<std::string>()),
                       s.at("message_size").get<std::uint32_t>());
    if (!is_goal_search(sr)) {
      out += "<p class=\"note\">Recorded by an older harness: see its search.json.</p>\n";
      continue;
    }
    out += fmt::format("<p class=\"note\">{}; {:g} trial-seconds in {} trials{}.</p>\n",
                       h::escape(sr.value("load_conversion", "")), number_or(sr, "trial_seconds"),
                       sr.at("trials").size(), h::escape(stopped_words(sr)));
    out += h::table({"goal", "relevant lower bound", "relevant upper bound", "conditional throughput", "result"},
                    goal_rows(sr));
    out += latency_steps_html(sr);
    if (auto c = search_chart(s, ids())) out += ids.place(*c);
  }
  return out;
}

// Per route repeated: mean and interval, as the sweep table gives them.
std::string pairs_repeats(const std::vector<repeat_group>& groups) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : groups) {
    if (g.topo != topology::pairs || !is_repeated(g)) continue;
    std::vector<std::string> row{h::escape(g.route), h::escape(g.test), std::string(nb::to_string(g.kind)),
                                 std::to_string(g.message_size), std::to_string(g.ok_runs())};
    if (g.ok_runs() == 0) row.push_back("<span class=\"bad\">FAILED</span>");
    else
      row.insert(row.end(), {h::with_interval(g.received_bps, h::mbps), h::with_interval(g.received_pps, h::pps),
                             percent(g.loss_percent.mean)});
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return "";
  return "<h3>Pairs over their repeats</h3>\n" +
         h::table({"from → to", "test", "kind", "m (bytes)", "ok runs", "received", "received pps", "loss (mean)"},
                  rows);
}

void append(std::vector<std::string>& row, const std::vector<std::string>& more) {
  row.insert(row.end(), more.begin(), more.end());
}

std::vector<std::string> tcp_html_headers() { return {"retransmits", "RTT (µs)", "MSS", "path MTU"}; }

std::string pairs_section(const std::vector<run_summary>& runs, const std::vector<repeat_group>& groups) {
  std::vector<std::vector<std::string>> rows;
  // As report_md.cpp's pairs table.
  const bool tcp = std::any_of(runs.begin(), runs.end(), [](const run_summary& s) {
    return s.run.topo == topology::pairs && !is_search_trial(s.run) && is_tcp(s);
  });
  for (const auto& s : runs) {
    if (s.run.topo != topology::pairs || is_search_trial(s.run)) continue;
    for (const auto& i : s.run.instances) {
      const bool ok = s.ok && i.result;
      const auto [from, to] = data_route(s.run, i);
      std::vector<std::string> row{
          h::escape(from),
          h::escape(to),
          ok ? h::mbps(i.result->receiver.bits_per_second) : "<span class=\"bad\">FAILED</span>",
          h::escape(i.category),
          h::escape(s.run.id),
          ok ? percent(i.result->loss.percent) : ""};
      if (tcp) append(row, is_tcp(s) && s.ok ? tcp_cells(i) : std::vector<std::string>(4));
      rows.push_back(std::move(row));
    }
  }
  if (rows.empty()) return "";
  std::vector<std::string> headers{"from", "to", "received", "category", "run", "loss"};
  if (tcp) append(headers, tcp_html_headers());
  return "<h2>Pairs: from → to → bandwidth → category</h2>\n" + h::table(headers, rows) + pairs_repeats(groups);
}

// `rest`: loss, path loss, kernel drops, start.
std::vector<std::string> rates_row(std::string name, std::string route, double sent_pps, double received_pps,
                                   double sent_bps, double received_bps, const std::vector<std::string>& rest) {
  std::vector<std::string> row{std::move(name), std::move(route), h::pps(sent_pps), h::pps(received_pps)};
  append(row, {h::mbps(sent_bps), h::mbps(received_bps)});
  append(row, rest);
  return row;
}

// Its first problem in the last cell.
std::vector<std::string> state_row(const instance_record& i, const std::string& route, const char* state) {
  std::vector<std::string> row(10);
  row.front() = h::escape(i.name);
  row[1] = route;
  row[2] = fmt::format("<span class=\"bad\">{}</span>", state);
  row.back() = h::escape(i.problems.empty() ? "" : i.problems.front());
  return row;
}

std::vector<std::string> instance_row(const instance_record& i, double t0) {
  const std::string route = h::escape(i.client + " → " + i.server);
  if (i.interrupted && (!i.problems.empty() || !i.result)) {  // what it counted until the stop
    const auto m = measured_until_stop(i);
    if (!m) return state_row(i, route, "interrupted");
    return rates_row(h::escape(i.name), route, m->sender.pps, m->receiver.pps, m->sender.bps, m->receiver.bps,
                     {percent(loss_percent(*m)), "", "",
                      fmt::format("<span class=\"bad\">until stop: {:.1f}{}s</span>", m->seconds, "\u00a0")});
  }
  if (!i.problems.empty() || !i.result) return state_row(i, route, "FAILED");
  const auto& t = *i.result;
  const bool known = drops_known(t);
  return rates_row(
      h::escape(i.name), route, t.sender.pps, t.receiver.pps, t.sender.bits_per_second, t.receiver.bits_per_second,
      {percent(t.loss.percent), (known ? "" : "≤ ") + count(t.loss.path),
       known ? count(t.loss.receiver_kernel_drops) : "unknown", fmt::format("{:.3f}", (t.actual_start - t0) * 1e3)});
}

std::vector<std::vector<std::string>> run_rows(const run_summary& s, bool tcp) {
  const auto& r = s.run;
  std::vector<std::vector<std::string>> rows;
  for (const auto& i : r.instances) {
    rows.push_back(instance_row(i, r.t0));
    if (i.problems.empty() && i.result && started_late(*i.result, r))
      rows.back().back() += " <span class=\"bad\">LATE</span>";
    if (tcp) append(rows.back(), tcp_cells(i));
  }
  if (s.ok) {
    rows.push_back(
        rates_row("SUM", fmt::format("{} instances", r.instances.size()), s.sender.pps, s.receiver.pps, s.sender.bps,
                  s.receiver.bps,
                  {percent(s.loss_percent), (s.drops_known ? "" : "≤ ") + count(s.path_loss),
                   s.drops_known ? count(s.kernel_drops) : "unknown", fmt::format("skew {:.3f}", s.start_skew_ms)}));
    if (tcp) append(rows.back(), tcp_sum_cells(s));
    if (const auto& w = s.steady)
      rows.push_back(rates_row("STEADY", fmt::format("{:g} s window", w->slots * r.interval), w->sender.pps,
                               w->receiver.pps, w->sender.bps, w->receiver.bps, {"", "", "", ""}));
  }
  if (r.interrupted && s.measured) {
    const measured_part& m = *s.measured;
    rows.push_back(rates_row("UNTIL STOP", h::escape(until_stop_cells(s)[1]), m.sender.pps, m.receiver.pps,
                             m.sender.bps, m.receiver.bps,
                             {percent(loss_percent(m)), "", "", fmt::format("{:.1f}{}s", m.seconds, "\u00a0")}));
  }
  return rows;
}

std::string run_section(const run_summary& s, chart_ids& ids) {
  const auto& r = s.run;
  std::string figures = s.ok ? fmt::format("received {}, {}; loss {}", h::pps(s.receiver.pps), h::mbps(s.receiver.bps),
                                           percent(s.loss_percent))
                             : "";
  if (const std::string state = run_state(s); !state.empty())
    figures += fmt::format("{}<span class=\"bad\">{}</span>", figures.empty() ? "" : " ", h::escape(state));
  // Open: a reader of the printed page never clicks.
  std::string out =
      fmt::format("<section class=\"run\" id=\"run-{}\">\n<h3>{} — {}, {} -m {}: {}</h3>\n", h::escape(r.id),
                  h::escape(r.id), h::escape(r.role), nb::to_string(r.kind), r.message_size, figures);
  const bool tcp = is_tcp(s);  // connections' retransmits, RTT, MSS, path MTU
  const auto rows = run_rows(s, tcp);
  std::vector<std::string> headers{"instance", "client → server", "sent pps",     "received pps", "sent", "received",
                                   "loss",     "path loss",       "kernel drops", "start +ms"};
  if (tcp) append(headers, tcp_html_headers());
  out += h::table(headers, rows);
  std::string notes;
  if (const auto with = r.spec.find("together_with"); with != r.spec.end())
    notes += fmt::format("<li>Both ways at once: these rows ran at the same instant as run {} (one T0)</li>\n",
                         h::escape(with->get<std::string>()));
  if (r.interrupted) notes += fmt::format("<li class=\"bad\">{}</li>\n", h::escape(until_stop_words(s)));
  for (const auto& f : s.failures) notes += fmt::format("<li class=\"bad\">{}</li>\n", h::escape(f));
  if (s.skewed())
    notes +=
        fmt::format("<li class=\"bad\">SKEWED: {}; its figures count, and are summed</li>\n", h::escape(late_words(s)));
  if (const auto circuit = circuit_words(s); !circuit.empty())
    notes += fmt::format("<li>{}</li>\n", h::escape(circuit));
  for (const auto& m : s.target_misses)
    notes += fmt::format("<li class=\"bad\">target missed: {}</li>\n", h::escape(m));
  if (s.limit) notes += fmt::format("<li><b>Limit</b>: {}</li>\n", h::escape(limit_words(s)));
  if (!s.steady && s.ok)
    notes += fmt::format("<li class=\"note\">No steady-state figure: {}</li>\n", h::escape(s.steady_note));
  if (s.rr)
    notes += fmt::format(
        "<li>Transactions: {} ({:.1f}/s, all instances), {} given up; round trips, every instance merged: "
        "{}</li>\n",
        s.rr->transactions, s.rr->transactions_per_second, s.rr->timeouts, h::escape(latency_words(s.rr->latency)));
  if (s.probe && !s.probe->error.empty())
    notes += fmt::format("<li class=\"bad\">latency probe failed: {}</li>\n", h::escape(s.probe->error));
  else if (s.probe)
    notes += fmt::format("<li><b>Latency probe</b> idle: {}<br>under the load: {}</li>\n",
                         h::escape(latency_words(s.probe->idle)), h::escape(latency_words(s.probe->loaded)));
  if (!notes.empty()) out += "<ul>\n" + notes + "</ul>\n";
  for (auto make : {timeline_chart, latency_chart, instance_chart, cpu_chart})
    if (auto c = make(s, ids())) out += ids.place(*c);
  return out + "</section>\n";
}

// Small: a drop shows at a glance.
std::string history_section(const run_history* history, chart_ids& ids) {
  std::string out = "<h2>Over the last runs</h2>\n";
  if (!history)
    return out +
           "<p class=\"note\">Not drawn: this page was rebuilt by `harness report`, which reads no results database.</p>\n";
  if (!history->recorded) return out + fmt::format("<p class=\"note\">No history: {}.</p>\n", h::escape(history->note));
  if (history->trends.empty())
    return out + fmt::format(
                     "<p class=\"note\">{}.</p>\n",
                     h::escape(history->note.empty() ? "No history: fewer than 2 runs of each measurement in the store"
                                                     : history->note));
  out += fmt::format(
      "<p class=\"note\">Each measurement over the last {} results folders of the plan in the results database (this "
      "run ringed).{}</p>\n",
      history->last_n, history->note.empty() ? "" : " " + h::escape(history->note) + ".");
  for (const auto& t : history->trends)
    if (auto c = trend_chart(t, false, ids())) out += ids.place(*c);
  return out;
}

std::string hosts_section(const json& env, const std::filesystem::path& env_file) {
  std::vector<host_check> checks;
  if (env.contains("hosts") && env["hosts"].is_object())
    for (const auto& [name, host] : env["hosts"].items())
      if (host.contains("check"))
        checks.push_back(
            host_check_from_json(host["check"], fmt::format("{}: host '{}': check", env_file.string(), name)));
  std::string out;
  if (!checks.empty())
    out +=
        "<h2>Hosts, as checked before the runs</h2>\n<p class=\"note\">Clock offset: the host's wall clock minus the "
        "harness's, measured over the ssh channel as NTP does (± its bound).</p>\n<pre>" +
        h::escape(check_table(checks)) + "</pre>\n";
  return out;
}

}  // namespace

std::string report_html(const std::vector<run_summary>& runs, const std::vector<json>& searches,
                        const std::filesystem::path& dir, std::vector<std::string>* chart_errors,
                        const run_history* history) {
  const json env = read_environment(dir);
  const auto groups = group_repeats(runs);
  chart_ids ids;
  std::string body = page_header(runs, searches.size(), dir, env) + sweep_section(groups, ids) +
                     search_section(searches, ids) + pairs_section(runs, groups) + history_section(history, ids);
  std::string run_sections;
  for (const auto& s : runs)
    if (!is_search_trial(s.run)) run_sections += run_section(s, ids);
  if (!run_sections.empty()) body += "<h2>Runs</h2>\n" + run_sections;
  body += hosts_section(env, dir / "environment.json");
  body += "<h2>Environment</h2>\n<p class=\"note\">environment.json</p>\n<pre>" +
          h::escape(env.dump(2, ' ', false, json::error_handler_t::replace)) + "</pre>\n";
  body += "<h2>Plan</h2>\n<p class=\"note\">plan.toml</p>\n<pre>" + h::escape(read_plan_copy(dir)) + "</pre>\n";
  if (chart_errors) *chart_errors = std::move(ids.errors);
  return h::page(fmt::format("Results: {}", h::folder_name(dir)), body);
}

std::vector<std::string> write_html_report(const std::filesystem::path& dir, const std::vector<run_summary>& runs,
                                           const std::vector<json>& searches, const run_history* history) {
  std::vector<std::string> chart_errors;
  write_file(dir / "report.html", report_html(runs, searches, dir, &chart_errors, history));
  return chart_errors;
}

}  // namespace harness
