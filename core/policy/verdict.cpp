// The rules, and why: docs/verdicts.md.
#include "core/policy/verdict.hpp"

#include "core/sys/kernel_features.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nb {
namespace {

struct judged {
  const test_result& r;
  const host_delta* snd;  // nullptr: not sampled
  const host_delta* rcv;
};

bool saturated(const cpu_share* c) { return c && c->busy_pct() >= saturated_cpu_pct; }

std::string busiest_text(const host_delta* h, const char* whose) {
  if (!h) return fmt::format("{} host not sampled", whose);
  const cpu_share* b = h->own_cpu();
  if (!b) return fmt::format("{} CPUs unknown", whose);
  return fmt::format("{} {} CPU {} {:.0f} % busy, softirq {:.0f} %", b->cpu == h->pinned_cpu ? "pinned" : "busiest",
                     whose, b->cpu, b->busy_pct(), b->softirq_pct);
}

const char* sender_process(const test_result& r) { return r.reverse ? "netserve" : "netload"; }

bool host_saturated(const host_delta* h) { return h && h->all.busy_pct() >= saturated_cpu_pct; }

double sender_cores(const judged& j) { return std::min<double>(j.r.streams, std::max<std::uint32_t>(j.snd->cpus, 1)); }

// Softirq done for the sender is charged to its CPU, not to it (bench/README.md#verdict-cpu-shares).
double sender_with_interrupts(const judged& j) {
  const cpu_share* b = j.snd->own_cpu();
  return j.snd->process_cpu_pct + (saturated(b) ? b->softirq_pct + b->irq_pct : 0);
}

bool sender_saturated(const judged& j) {
  if (!j.snd) return false;
  return sender_with_interrupts(j) >= saturated_process_pct * sender_cores(j) || host_saturated(j.snd);
}

std::string sender_cpu_text(const judged& j) {
  const host_delta& h = *j.snd;
  const cpu_share* own = h.own_cpu();  // sender_with_interrupts found it
  const char* proc = sender_process(j.r);
  if (h.process_cpu_pct >= saturated_process_pct * sender_cores(j))
    return fmt::format("{} {:.0f} % of a core for {} stream{}", proc, h.process_cpu_pct, j.r.streams,
                       j.r.streams == 1 ? "" : "s");
  if (sender_with_interrupts(j) >= saturated_process_pct * sender_cores(j))
    return fmt::format("{} {:.0f} % of a core plus softirq/irq {:.0f} % on the sender's CPU {} ({:.0f} % busy)", proc,
                       h.process_cpu_pct, own->softirq_pct + own->irq_pct, own->cpu, own->busy_pct());
  return fmt::format("the sender host's CPUs were {:.0f} % busy (other load): {} had {:.0f} % of a core",
                     h.all.busy_pct(), proc, h.process_cpu_pct);
}

// TCP: a receiver that cannot keep up closes its window and holds the sender back.
bool receiver_saturated(const judged& j) { return j.rcv && (saturated(j.rcv->own_cpu()) || host_saturated(j.rcv)); }

limit_verdict socket_loss(const judged& j, const std::string& drops) {
  const cpu_share* b = j.rcv ? j.rcv->own_cpu() : nullptr;
  if (saturated(b) && b->softirq_pct >= livelock_softirq_pct)
    return {"receiver-cpu",
            fmt::format("receiver CPU-bound (CPU {} {:.0f} % busy, softirq {:.0f} %: receive livelock): {}", b->cpu,
                        b->busy_pct(), b->softirq_pct, drops)};
  // No idle CPU for the reader (bench/README.md#verdict-cpu-shares).
  if (host_saturated(j.rcv))
    return {"receiver-cpu", fmt::format("receiver CPU-bound (the receiving host's CPUs were {:.0f} % busy, the reader "
                                        "starved): {}",
                                        j.rcv->all.busy_pct(), drops)};
  return {"receiver-socket", fmt::format("receiving socket overflow (buffer too small or the reader too slow): {}; {}",
                                         drops, busiest_text(j.rcv, "receiver"))};
}

limit_verdict socket_loss(const judged& j) {
  const loss_figures& l = j.r.loss;
  return socket_loss(j, fmt::format("the receiving socket dropped {}{} of {} lost", l.drops_estimated ? "about " : "",
                                    l.receiver_kernel_drops, l.packets));
}

std::uint64_t udp_errors(const host_delta& h) {
  return h.udp.in_errors > h.udp.rcvbuf_errors ? h.udp.in_errors - h.udp.rcvbuf_errors : 0;
}

// InErrors beyond RcvbufErrors: the socket's overflows are judged apart.
std::uint64_t below_socket(const host_delta& h) { return h.softnet_dropped + h.rx_dropped() + udp_errors(h); }

std::string below_socket_text(const host_delta& h) {
  return fmt::format("the receiving host counted {} backlog drops, {} interface receive drops, {} UDP errors{}",
                     h.softnet_dropped, h.rx_dropped(), udp_errors(h),
                     h.softnet_time_squeeze
                         ? fmt::format(", and its softirq ran out of budget {} times", h.softnet_time_squeeze)
                         : std::string());
}

limit_verdict path_loss(const judged& j) {
  const loss_figures& l = j.r.loss;
  // A budget squeeze drops nothing itself, so squeezes alone are no host verdict.
  if (j.rcv && below_socket(*j.rcv) * 2 >= l.path && below_socket(*j.rcv) > 0)
    return {"before-socket", fmt::format("dropped before the socket (backlog / NIC): {} lost past the socket; {}",
                                         l.path, below_socket_text(*j.rcv))};
  std::string s =
      fmt::format("path loss: {} of {} ({:.2f} %) lost between the sockets", l.path, j.r.sender.packets, l.percent);
  if (j.rcv && below_socket(*j.rcv) > 0)
    s += fmt::format("; {}, too few to be the larger part", below_socket_text(*j.rcv));
  else if (j.rcv && j.rcv->softnet_time_squeeze > 0)
    s += fmt::format(
        "; the receiving host counted no drop below the socket (its softirq ran out of budget {} "
        "times, which drops nothing by itself)",
        j.rcv->softnet_time_squeeze);
  if (j.snd && j.snd->tx_dropped())
    s += fmt::format("; the sending host's interfaces dropped {} on transmit", j.snd->tx_dropped());
  if (!j.rcv) s += "; receiver host not sampled";
  return {"path", s};
}

std::string unknown_drops_why(const test_result& r) {
  const std::string_view stock = stock_receiver(r.receiver.batching);
  return stock.empty() ? std::string("no SO_MEMINFO in its kernel") : fmt::format("{} does not report them", stock);
}

// Its 0 must not send every loss to the path.
limit_verdict unknown_drops_loss(const judged& j) {
  const loss_figures& l = j.r.loss;
  if (!j.rcv)
    return {"none", fmt::format("no verdict: {} of {} ({:.2f} %) lost, on the path or in the receiving socket, "
                                "unknown which: the socket's own drops are unknown ({}) and the receiving host "
                                "was not sampled",
                                l.packets, j.r.sender.packets, l.percent, unknown_drops_why(j.r))};
  // With GRO a dropped buffer counts once and holds up to 64 datagrams (UDP_MAX_SEGMENTS).
  const std::uint64_t per_drop = j.r.receiver.batching.starts_with("gro") ? 64 : 1;
  if (j.rcv->udp.rcvbuf_errors * per_drop * 2 >= l.packets)
    return socket_loss(j,
                       fmt::format("the receiving host's sockets dropped {} (its UDP RcvbufErrors, every socket: "
                                   "the test socket's own drops are unknown, {}) of {} lost",
                                   std::min(j.rcv->udp.rcvbuf_errors, l.packets), unknown_drops_why(j.r), l.packets));
  limit_verdict v = path_loss(j);
  v.text += fmt::format("; the receiving socket's own drops are unknown ({})", unknown_drops_why(j.r));
  if (j.rcv->udp.rcvbuf_errors)
    v.text += fmt::format(", its host's sockets dropped {} (RcvbufErrors, every socket)", j.rcv->udp.rcvbuf_errors);
  return v;
}

limit_verdict missed_target(const judged& j, const pacing_outcome& p) {
  if (sender_saturated(j))
    return {"sender-cpu", fmt::format("sender CPU-bound: it missed its paced target by {:.2f} % ({})", -p.error_percent,
                                      sender_cpu_text(j))};
  if (j.r.kind == test_kind::tcp_stream && receiver_saturated(j))
    return {"receiver-cpu", fmt::format("receiver CPU-bound ({}): TCP held the sender {:.2f} % short of its target",
                                        busiest_text(j.rcv, "receiver"), -p.error_percent)};
  return {"path", fmt::format("the sender missed its paced target by {:.2f} % with its CPU not saturated ({}): "
                              "sending was held back by the {} or the path",
                              -p.error_percent, busiest_text(j.snd, "sender"),
                              j.r.kind == test_kind::tcp_stream ? "receiver" : "link out")};
}

limit_verdict no_loss(const judged& j, const pacing_outcome& p) {
  if (p.paced && p.missed) return missed_target(j, p);
  if (!p.paced && sender_saturated(j))
    return {"sender-cpu", fmt::format("sender CPU-bound (unpaced: the figure is what this sender can do here): {}",
                                      sender_cpu_text(j))};
  if (!p.paced && j.r.kind == test_kind::tcp_stream && receiver_saturated(j))
    return {"receiver-cpu", fmt::format("receiver CPU-bound ({}): TCP flow control held the sender back",
                                        busiest_text(j.rcv, "receiver"))};
  if (p.paced) return {"none", "no host limit seen: the paced target was carried without loss"};
  std::string s = is_rr(j.r.kind) ? fmt::format(
                                        "no host limit seen: the rate is what the round trip allows with {} "
                                        "transaction{} in flight",
                                        j.r.rr ? j.r.rr->burst + 1 : 1, j.r.rr && j.r.rr->burst ? "s" : "")
                                  : std::string("no host limit seen: the figure is the path's");
  if (!j.snd || !j.rcv) s += fmt::format(" ({} not sampled)", !j.snd ? "sender host" : "receiver host");
  return {"none", s};
}

}  // namespace

limit_verdict judge_limit(const test_result& r, const pacing_outcome& pacing) {
  if (!r.ok) return {"none", "no verdict: the test did not complete"};
  if (!r.loss.reconciles) return {"none", "no verdict: the counts do not reconcile"};
  const judged j{r, r.hosts.sender ? &*r.hosts.sender : nullptr, r.hosts.receiver ? &*r.hosts.receiver : nullptr};
  if (r.loss.packets == 0) return no_loss(j, pacing);
  if (drops_unknown(r.receiver.batching)) return unknown_drops_loss(j);
  if (r.loss.receiver_kernel_drops * 2 >= r.loss.packets) return socket_loss(j);
  return path_loss(j);
}

limit_verdict judge_limit(const test_result& r) {
  pacing_outcome p;
  // A TCP test under its ceiling was not held by the pacing; a ceiling is never missed from below (with --omit
  // one exceeded in the left-out seconds may leave the window under it).
  const target_figures* t = r.target ? &*r.target : nullptr;
  const bool under_ceiling = t && t->ceiling && t->met && t->error_percent < -target_tolerance_percent;
  if (t && !under_ceiling) p = {true, !t->met && !t->ceiling && t->error_percent < 0, t->error_percent};
  return judge_limit(r, p);
}

namespace {

const char* overdriven_because(const std::string& limit) {
  if (limit == "receiver-cpu") return "its CPU could not take them all in";
  if (limit == "receiver-socket") return "its socket overflowed";
  if (limit == "before-socket") return "its kernel dropped them before the socket";
  return nullptr;
}

}  // namespace

std::optional<std::string> figure_meaning(const test_result& r) {
  if (!r.ok || !r.verdict || r.kind != test_kind::udp_stream || r.target || r.loss.packets == 0) return std::nullopt;
  const char* because = overdriven_because(r.verdict->limit);
  if (!because) return std::nullopt;
  return fmt::format(
      "received {:.1f} pps is what this receiver kept while overdriven ({:.1f} pps sent, {:.2f} % lost: {}); "
      "it is neither the sender's speed nor the rate this receiver carries without loss, which may be "
      "lower or higher: run netload --search pdr with the same options to find it",
      r.receiver.pps, r.sender.pps, r.loss.percent, because);
}

}  // namespace nb
