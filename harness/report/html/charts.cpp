#include "harness/report/html/charts.hpp"

#include "harness/report/html/gnuplot.hpp"
#include "harness/report/html/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace harness {
namespace {

using nlohmann::json;
using data_rows = std::vector<std::vector<std::string>>;

constexpr const char* palette[] = {"#1a73e8", "#e8710a", "#188038", "#d93025",
                                   "#9334e6", "#12b5cb", "#795548", "#5f6368"};

std::string color(std::size_t i) { return fmt::format("lc rgb '{}'", palette[i % std::size(palette)]); }
std::string num(double v) { return fmt::format("{:.6g}", v); }
// gnuplot reads a double-quoted cell as one column; a newline would end the datablock and make the rest
// of a name gnuplot commands: control characters become spaces.
std::string label_cell(std::string text) {
  for (char& c : text)
    if (c == '"') c = '\'';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return "\"" + text + "\"";
}

chart draw(std::string name, std::string caption, const std::string& script, int width, int height,
           const std::string& id) {
  chart c{std::move(name), std::move(caption), "", ""};
  try {
    c.svg = render_svg(script, width, height, id);
  } catch (const chart_error& e) {
    c.error = e.what();
  }
  return c;
}

// Log scale where the figures span more than a decade and a half; tics with a unit prefix for rates.
bool spans_decades(double lo, double hi) { return lo > 0 && hi / lo > 30; }

std::string log_note(double lo, double hi, std::string_view where = "") {
  return spans_decades(lo, hi) ? fmt::format(" Log scale{}: the figures span {:.0f} to 1.", where, hi / lo) : "";
}

struct extent {
  double lo = 0, hi = 0;
  void add(double v) {
    if (v > 0) lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
};

std::string y_scale(double lo, double hi, bool prefixed = true) {
  const bool log = spans_decades(lo, hi);
  return fmt::format("{}set format y '{}'\n", log ? "set logscale y 10\n" : "set yrange [0:*]\n",
                     !prefixed ? (log ? "%.0f" : "%g")
                     : log     ? "%.0s %c"
                               : "%.1s %c");
}

const char* common =
    "set grid ytics lc rgb '#dddddd'\nset border 3\nset tics nomirror\nset key outside top center horizontal\n";

// One line per role (and kind and load where they vary): its PPS test (-m 1) and BPS test (-m 1400) are one
// curve, unless two of its tests share a size.
using sweep_curve = std::pair<std::string, std::map<std::uint32_t, const repeat_group*>>;
std::vector<sweep_curve> sweep_curves(const std::vector<repeat_group>& groups) {
  std::set<std::string> kinds;
  for (const auto& g : groups) kinds.insert(std::string(nb::to_string(g.kind)));
  auto base_title = [&](const repeat_group& g) {
    std::string title = g.role;
    if (kinds.size() > 1) title += fmt::format(" {}", nb::to_string(g.kind));
    return g.load.empty() ? title : title + " at " + g.load + " each";
  };
  std::map<std::string, std::map<std::uint32_t, std::set<std::string>>> tests_at;
  for (const auto& g : groups) tests_at[base_title(g)][g.message_size].insert(g.test);
  auto split = [&](const std::string& base) {
    const auto& sizes = tests_at[base];
    return std::any_of(sizes.begin(), sizes.end(), [](const auto& s) { return s.second.size() > 1; });
  };
  std::vector<sweep_curve> lines;
  for (const auto& g : groups) {
    if (g.topo == topology::pairs || g.received_pps.n == 0) continue;
    const std::string base = base_title(g);
    const std::string title = split(base) ? fmt::format("{} ({})", base, g.test) : base;
    auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.first == title; });
    if (it == lines.end()) it = lines.insert(lines.end(), {title, {}});
    it->second.emplace(g.message_size, &g);
  }
  return lines;
}

}  // namespace

std::optional<chart> sweep_chart(const std::vector<repeat_group>& groups, sweep_metric metric, const std::string& id) {
  const auto lines = sweep_curves(groups);
  if (std::none_of(lines.begin(), lines.end(), [](const auto& l) { return l.second.size() >= 2; })) return std::nullopt;
  const bool pps = metric == sweep_metric::pps;
  const double scale = pps ? 1.0 : 1e-6;
  std::string script = common;
  std::set<std::uint32_t> sizes;
  double lo = 0, hi = 0;
  std::string plot;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    data_rows data;
    for (const auto& [m, g] : lines[i].second) {
      const spread& rx = pps ? g->received_pps : g->received_bps;
      const spread& tx = pps ? g->sent_pps : g->sent_bps;
      data.push_back(
          {num(m), num(rx.mean * scale), num(rx.ci_low * scale), num(rx.ci_high * scale), num(tx.mean * scale)});
      sizes.insert(m);
      for (double v : {rx.ci_low * scale, tx.mean * scale})
        if (v > 0) lo = lo == 0 ? v : std::min(lo, v);
      hi = std::max({hi, rx.ci_high * scale, tx.mean * scale});
    }
    script += gp_datablock(fmt::format("L{}", i), data);
    plot += fmt::format(
        "{}$L{} using 1:2:3:4 with yerrorlines {} lw 2 pt 7 ps 0.6 title {}, "
        "$L{} using 1:5 with lines {} lw 1.5 dt 2 title {}",
        i ? ", " : "", i, color(i), gp_quote(lines[i].first + " received"), i, color(i),
        gp_quote(lines[i].first + " sent"));
  }
  std::string tics;
  for (auto m : sizes) tics += fmt::format("{}'{}' {}", tics.empty() ? "" : ", ", m, m);
  // Slanted labels: sizes such as 1024 and 1400 sit close.
  script += fmt::format("set xrange [{}:{}]\n", num(*sizes.begin() / 1.4), num(*sizes.rbegin() * 1.4));
  script += fmt::format(
      "set logscale x 10\nset xtics ({}) rotate by -40\nset xlabel 'message size (bytes)'\nset ylabel {}\n{}plot {}\n",
      tics, gp_quote(pps ? "packets per second" : "Mbit/s"), y_scale(lo, hi, pps), plot);
  return draw(pps ? "sweep-pps" : "sweep-mbps",
              fmt::format("{} against message size, summed over the instances: received (solid; error bars: the 95 % "
                          "interval of the mean over the repeats) and sent (dashed).{}",
                          pps ? "Packets per second" : "Mbit/s", log_note(lo, hi)),
              script + "\n", 900, 420, id);
}

namespace {
// "" without a steady window.
std::string steady_shade(const run_summary& s) {
  if (!s.steady) return "";
  const double from = static_cast<double>(s.steady->start_ns) / 1e9 - s.run.t0;
  const double to = static_cast<double>(s.steady->end_ns) / 1e9 - s.run.t0;
  return fmt::format(
      "set object 1 rect from {}, graph 0 to {}, graph 1 behind fillcolor rgb '#e6f4ea' "
      "fillstyle solid 1.0 noborder\nset label 1 'steady' at {}, graph 0.96 tc rgb '#188038'\n",
      num(from), num(to), num(from + 0.05));
}
}  // namespace

std::optional<chart> timeline_chart(const run_summary& s, const std::string& id) {
  const auto& r = s.run;
  const bool tcp = r.kind == nb::test_kind::tcp_stream;
  // TCP's messages are only its bytes cut up: Mbit/s.
  auto rate = [&](std::uint64_t packets, std::uint64_t bytes, double secs) {
    return tcp ? static_cast<double>(bytes) * 8 / secs / 1e6 : static_cast<double>(packets) / secs;
  };
  std::map<std::uint32_t, std::array<double, 3>> sum;  // slot -> mid time, received, sent
  std::string script = common, plot;
  int drawn = 0;
  extent span;
  for (const auto& i : r.instances) {
    // An interrupted instance has the samples received live.
    const auto intervals = intervals_of(i);
    data_rows data;
    for (const auto& iv : intervals) {
      const double secs = static_cast<double>(iv.end_ns - iv.start_ns) / 1e9;
      if (secs <= 0) continue;
      const double mid = static_cast<double>(iv.start_ns + iv.end_ns) / 2e9 - r.t0;
      const double rx = rate(iv.received_packets, iv.received_bytes, secs),
                   tx = rate(iv.sent_packets, iv.sent_bytes, secs);
      data.push_back({num(mid), num(rx)});
      auto& slot = sum[iv.index];
      slot[0] = std::max(slot[0], mid);
      slot[1] += rx;
      slot[2] += tx;
    }
    if (data.empty()) continue;
    script += gp_datablock(fmt::format("I{}", drawn), data);
    plot += fmt::format("$I{} using 1:2 with lines lw 0.7 lc rgb '#9aa0a6' {}, ", drawn,
                        drawn ? "notitle" : "title 'each instance, received'");
    ++drawn;
  }
  if (sum.empty()) return std::nullopt;
  data_rows total;
  for (const auto& [k, v] : sum) {
    total.push_back({num(v[0]), num(v[1]), num(v[2])});
    span.add(v[1]);
    span.add(v[2]);
  }
  script += gp_datablock("S", total);
  script += steady_shade(s);
  script += fmt::format("set xrange [0:{}]\n", num(std::max(r.spec.is_object() ? r.spec.value("duration", 0.0) : 0.0,
                                                            sum.rbegin()->second[0] + r.interval / 2)));
  script += fmt::format(
      "set xlabel 'seconds after the common start T0'\nset ylabel {}\n{}"
      "plot {}$S using 1:2 with linespoints lw 2.5 pt 7 ps 0.5 {} title 'all instances, received', "
      "$S using 1:3 with lines lw 2 dt 2 {} title 'all instances, sent'\n",
      gp_quote(tcp ? "Mbit/s" : "packets per second"), y_scale(span.lo, span.hi), plot, color(0), color(1));
  return draw("timeline",
              fmt::format("Per interval of {:g} s: the sum over the instances received (solid) and sent (dashed), each "
                          "instance received (grey){}.{}",
                          r.interval, s.steady ? "; shaded: the steady-state window" : "", log_note(span.lo, span.hi)),
              script, 900, 340, id);
}

std::optional<chart> latency_chart(const run_summary& s, const std::string& id) {
  if (!s.probe || s.probe->series.empty()) return std::nullopt;
  const probe_summary& p = *s.probe;
  data_rows data;
  for (const latency_point& l : p.series)
    if (l.count) data.push_back({num(l.t_s), num(l.p50_us / 1e3), num(l.p99_us / 1e3), num(l.max_us / 1e3)});
  if (data.empty()) return std::nullopt;
  std::string script = common + gp_datablock("L", data);
  script +=
      "set object 1 rect from graph 0, graph 0 to 0, graph 1 behind fillcolor rgb '#f1f3f4' fillstyle solid 1.0 "
      "noborder\nset label 1 'idle' at graph 0.01, graph 0.96 tc rgb '#5f6368'\n";
  script += fmt::format(
      "set xlabel 'seconds after T0 (the load starts at 0)'\nset ylabel 'round trip, ms'\nset yrange [0:*]\n"
      "plot $L using 1:2 with linespoints lw 2 pt 7 ps 0.4 {} title 'p50', "
      "$L using 1:3 with linespoints lw 2 pt 7 ps 0.4 {} title 'p99', "
      "$L using 1:4 with lines lw 1 dt 2 {} title 'max'\n",
      color(0), color(3), color(7));
  return draw("latency",
              fmt::format("Latency probe: the round trips of each interval of {:g} s (UDP_RR, {:g} per second), idle "
                          "(shaded) and under the load.",
                          s.run.interval, p.pps),
              script, 900, 300, id);
}

std::optional<chart> instance_chart(const run_summary& s, const std::string& id) {
  data_rows counts;
  bool any_loss = false;
  extent span;
  for (const auto& i : s.run.instances) {
    if (!i.problems.empty() || !i.result) continue;  // a failed instance has no figures, never zeros
    const auto& t = *i.result;
    span.add(static_cast<double>(t.sender.packets));
    span.add(static_cast<double>(t.receiver.packets));
    counts.push_back({label_cell(i.name), std::to_string(t.sender.packets), std::to_string(t.receiver.packets),
                      std::to_string(t.loss.path), std::to_string(drops_known(t) ? t.loss.receiver_kernel_drops : 0)});
    any_loss = any_loss || t.loss.packets > 0;
  }
  if (counts.empty()) return std::nullopt;
  const std::string drops_title =
      s.drops_known ? "kernel drops (receiving socket)" : "kernel drops: unknown (no SO_MEMINFO)";
  std::string script = std::string(common) + gp_datablock("D", counts);
  script += fmt::format(
      "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
      "set boxwidth 0.9\nset xtics rotate by -30\nset multiplot layout 2,1\n"
      "set ylabel 'packets'\n{}"
      "plot $D using 2:xtic(1) {} title 'sent', '' using 3 {} title 'received'\n"
      "unset logscale y\nset format y '%.1s %c'\nset ylabel 'packets lost'\n{}"
      "plot $D using 4:xtic(1) {} title {}, '' using 5 {} title {}\nunset multiplot\n",
      y_scale(span.lo, span.hi), color(1), color(0), any_loss ? "set yrange [0:*]\n" : "set yrange [0:1]\n", color(3),
      gp_quote(s.drops_known ? "path loss" : "path loss (at most)"), color(4), gp_quote(drops_title));
  return draw("instances",
              "Per instance: packets sent and received (top), and where the lost ones went (bottom)." +
                  log_note(span.lo, span.hi, " (top)"),
              script, 900, 460, id);
}

std::optional<chart> cpu_chart(const run_summary& s, const std::string& id) {
  // A host's figures come with each of its instances; the first tells its CPU split.
  std::vector<std::pair<std::string, nb::cpu_share>> hosts;
  auto add = [&](const std::string& name, const std::optional<nb::host_delta>& d) {
    if (!d || std::any_of(hosts.begin(), hosts.end(), [&](const auto& h) { return h.first == name; })) return;
    hosts.emplace_back(name, d->all);
  };
  for (const auto& i : s.run.instances) {
    if (!i.result) continue;
    const bool rev = i.result->reverse;
    add(rev ? i.server : i.client, i.result->hosts.sender);
    add(rev ? i.client : i.server, i.result->hosts.receiver);
  }
  if (hosts.empty()) return std::nullopt;
  data_rows data;
  for (const auto& [name, c] : hosts)
    data.push_back(
        {label_cell(name), num(c.user_pct), num(c.system_pct), num(c.softirq_pct), num(c.irq_pct), num(c.steal_pct)});
  std::string script = std::string(common) + gp_datablock("C", data);
  script += fmt::format(
      "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\nset boxwidth 0.6\n"
      "set ylabel '% of all its CPUs'\nset yrange [0:100]\n"
      "plot $C using 2:xtic(1) {} title 'user', '' using 3 {} title 'system', '' using 4 {} title 'softirq', "
      "'' using 5 {} title 'irq', '' using 6 {} title 'steal'\n",
      color(0), color(1), color(3), color(4), color(7));
  return draw("cpu",
              "Busy CPU per host over the test window, averaged over all its CPUs (a host on loopback is "
              "listed under each of its names).",
              script, 900, 300, id);
}

// %, the interval as a share of the baseline's mean.
std::optional<chart> change_chart(const std::vector<comparison>& all, const std::string& id) {
  std::string script = common;
  std::string plot;
  // One position per group key, in the order first met.
  std::vector<std::string> keys;
  auto position = [&](const compare_row& r) {
    auto it = std::find(keys.begin(), keys.end(), r.a.key);
    if (it == keys.end()) it = keys.insert(keys.end(), r.a.key);
    return static_cast<std::size_t>(it - keys.begin()) + 1;
  };
  for (std::size_t k = 0; k < all.size(); ++k) {
    std::vector<std::vector<std::string>> with, without;
    for (const auto& r : all[k].rows) {
      const std::size_t x = position(r);
      if (std::isnan(r.pps_change)) continue;
      const double base = r.a.received_pps.mean;
      auto& rows = r.pps.has_interval ? with : without;
      rows.push_back({std::to_string(x), fmt::format("{:.6g}", r.pps_change),
                      fmt::format("{:.6g}", r.pps.low / base * 100), fmt::format("{:.6g}", r.pps.high / base * 100)});
    }
    if (!with.empty()) {
      script += gp_datablock(fmt::format("W{}", k), with);
      plot += fmt::format("{}$W{} using 1:2:3:4 with yerrorbars pt 7 ps 0.8 lw 1.5 lc rgb '#1a73e8' title {}",
                          plot.empty() ? "" : ", ", k,
                          gp_quote(html::folder_name(all[k].b_name) + " against " + html::folder_name(all[k].a_name)));
    }
    if (!without.empty()) {
      script += gp_datablock(fmt::format("N{}", k), without);
      plot += fmt::format("{}$N{} using 1:2 with points pt 6 ps 1.2 lw 1.5 lc rgb '#e8710a' title {}",
                          plot.empty() ? "" : ", ", k,
                          gp_quote(html::folder_name(all[k].b_name) + " (one run: no interval)"));
    }
  }
  std::string tics;
  for (std::size_t x = 0; x < keys.size(); ++x) tics += fmt::format("{}{} {}", x ? ", " : "", gp_quote(keys[x]), x + 1);
  if (plot.empty()) return std::nullopt;
  script += fmt::format(
      "set xrange [0.5:{}.5]\nset xtics ({}) rotate by -25\nset ylabel 'received pps: change (%)'\n"
      "set arrow from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#5f6368'\nplot {}\n",
      keys.size(), tics, plot);
  return draw("compare",
              "Change of the received pps against the baseline; error bars: the 95 % interval of the difference of the "
              "means (Welch), where both sides have repeats. An interval that crosses zero shows no difference.",
              script, 900, 420, id);
}

}  // namespace harness
