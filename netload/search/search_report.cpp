#include "netload/search/search_report.hpp"

#include "core/json/json_fields.hpp"
#include "core/search/load_stats.hpp"
#include "core/search/search_record.hpp"
#include "netload/native/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace nb::load {
namespace {

using nb::search::goal;
using nb::search::goal_result;
using nlohmann::json;

constexpr int class_width = 13;

double payload_mbit(double pps, std::uint32_t message_size) { return pps * message_size * 8 / 1e6; }

std::string goal_parameters(const goal& g) {
  return fmt::format(
      "loss ratio {:g}, exceed ratio {:g}, final trial {:g} s, duration sum {:g} s, width {:g}, initial "
      "trial {:g} s",
      g.loss_ratio, g.exceed_ratio, g.final_trial_duration, g.duration_sum, g.width, g.initial_trial_duration);
}

// What a trial's line says after its figures: why this load, and what makes it count less or not at all.
std::string trial_note(const search_trial& t) {
  const test_result& r = t.result;
  // Stopped before it began, or its figures never came: the error says which; there is no time to give.
  if (t.interrupted() && !r.ok) return fmt::format("INTERRUPTED, not counted: {}", r.error);
  if (t.interrupted())
    return fmt::format("INTERRUPTED by {} after {:.2f} s of {:g} s: not counted", r.interrupted->signal,
                       r.interrupted->measured_s, t.measured.duration);
  if (!r.ok) return fmt::format("FAILED: {}", r.error);
  std::string note = t.reason;
  if (t.n == 0)
    note = fmt::format("MRR: maximum load {:.0f} pps (sent), first guess {:.0f} pps (received){}", r.sender.pps,
                       r.receiver.pps, r.segmentation ? "; sent " + segmentation_words(*r.segmentation) : "");
  if (t.measured.load_limited)
    note += fmt::format("; load-limited: sent {} of {:.0f} due, {}", t.measured.sent,
                        t.measured.intended_load * t.measured.duration,
                        t.repeated ? "run again (the search is told the next)" : "not counted");
  if (r.verdict && r.verdict->limit != "none" && r.verdict->limit != "path")
    note += fmt::format(" [limit: {}]", r.verdict->limit);
  return note;
}

std::string bound_text(const std::optional<double>& v, const char* missing) {
  return v ? fmt::format("{:.0f} pps", *v) : std::string(missing);
}

std::string goal_result_text(const client_options& o, const goal_result& g, bool interrupted) {
  const bool open = interrupted && !g.regular;
  // Why a bound is missing is what the search found (its irregularities), not a guess: a trial cap, a
  // time cap or failed trials end a search with neither.
  const auto named = [&](std::string_view what) {
    return std::any_of(g.irregularities.begin(), g.irregularities.end(),
                       [&](const std::string& i) { return i.starts_with(what); });
  };
  const char* interrupted_text = "not established: the search was interrupted";
  const char* ended_text = "none found before the search ended (see below)";
  const char* no_lower = open                                  ? interrupted_text
                         : named("min load is an upper bound") ? "none: even the minimal load is an upper bound"
                                                               : ended_text;
  const char* no_upper = open                                 ? interrupted_text
                         : named("max load is a lower bound") ? "none: the maximal load is a lower bound"
                                                              : ended_text;
  std::string out = fmt::format("{} ({}):\n", g.g.name, goal_parameters(g.g));
  out += fmt::format("  relevant lower bound    {}\n", bound_text(g.relevant_lower_bound, no_lower));
  out += fmt::format("  relevant upper bound    {}", bound_text(g.relevant_upper_bound, no_upper));
  if (g.relevant_lower_bound && g.relevant_upper_bound && *g.relevant_upper_bound > 0)
    out += fmt::format("  (width {:.4f}, goal {:g})",
                       nb::search::relative_width(*g.relevant_lower_bound, *g.relevant_upper_bound), g.g.width);
  out += "\n";
  if (g.conditional_throughput) {
    const double ct = *g.conditional_throughput;
    out += fmt::format("  conditional throughput  {:.0f} pps, {:.2f} Mbit/s payload (-m {})", ct,
                       payload_mbit(ct, o.message_size), o.message_size);
    if (o.streams > 1) out += fmt::format("; {:.0f} pps per stream ({} streams)", ct / o.streams, o.streams);
    out += "\n";
  } else {
    out += fmt::format("  conditional throughput  {}\n", open ? "not established: the search was interrupted" : "none");
  }
  if (g.regular) return out + "  regular\n";
  if (open) {  // what the search had seen so far, not a finding
    out += "  not established: the search was interrupted before this goal was done";
    for (std::size_t k = 0; k < g.irregularities.size(); ++k) out += (k ? "; " : "; so far: ") + g.irregularities[k];
    return out + "\n";
  }
  if (g.irregularities.empty()) out += "  not regular: the bounds are wider than the goal\n";
  for (const auto& why : g.irregularities) out += fmt::format("  irregular: {}\n", why);
  return out;
}

json trial_test_json(const search_trial& t) {
  const test_result& r = t.result;
  json j = {{"n", t.n},
            {"reason", t.reason},
            {"intended_load", t.measured.intended_load},
            {"duration", t.measured.duration},
            {"ok", r.ok},
            {"error", r.ok ? json(nullptr) : json(r.error)},
            {"sent", r.sender.packets},
            {"received", r.receiver.packets},
            {"sent_pps", r.sender.pps},
            {"received_pps", r.receiver.pps},
            {"load_limited", t.measured.load_limited},
            {"repeated", t.repeated},
            {"limit", r.verdict ? json(r.verdict->limit) : json(nullptr)},
            {"segmentation", r.segmentation ? write_described(*r.segmentation) : json(nullptr)}};
  j["interrupted"] = t.interrupted()
                         ? json{{"signal", r.interrupted->signal}, {"measured_s", r.interrupted->measured_s}}
                         : json(nullptr);
  return j;
}

json search_options_json(const client_options& o) {
  json goals = json::array();
  for (const auto& g : o.search.search_goals())
    goals.push_back(nb::search::to_json(g));  // the goal as the search record writes it
  return {{"goals", o.search.goals},
          {"search_goals", goals},
          {"settle_s", o.search.settle_s},
          {"max_trials", o.search.max_trials},
          {"max_search_time_s", o.search.max_time_s}};
}

// The search's record as the harness's: a stop leaves bounds the search had not established, said so per
// goal; trial-seconds count every trial run to its end, the unpaced one and those run again too.
nb::search::search_record search_record_of(const client_options& o, const nb::search::mlr_search* s,
                                           const std::vector<search_trial>& trials, const search_end& end) {
  nb::search::search_record r;
  r.goals = o.search.search_goals();
  r.interrupted = !end.signal.empty();
  r.stopped = r.interrupted ? fmt::format("interrupted by {}", end.signal) : end.cap;
  r.goal_results = nb::search::goal_results_of(r.goals, s, r.interrupted, r.stopped);
  if (!trials.empty() && trials.front().result.ok && !trials.front().interrupted())
    r.mrr = nb::search::unpaced_rates{trials.front().result.sender.pps, trials.front().result.receiver.pps};
  for (const auto& t : trials)
    if (!t.interrupted()) r.trial_seconds += t.measured.duration;
  return r;
}

}  // namespace

std::string search_heading(const client_options& o, const std::vector<goal>& goals) {
  std::string out = fmt::format(
      "netload --search: UDP_STREAM -m {} to {} port {}, {} stream{}; loads are packets/s offered "
      "by all streams together\n",
      o.message_size, o.host, o.port, o.streams, o.streams == 1 ? "" : "s");
  for (const auto& g : goals) out += fmt::format("  {}: {}\n", g.name, goal_parameters(g));
  out += fmt::format("{:>4} {:>11} {:>6} {:>11} {:>11} {:>10}", "n", "load pps", "dur s", "sent", "received",
                     "loss ratio");
  for (const auto& g : goals) out += fmt::format(" {:<{}}", g.name, class_width);
  return out + " note\n";
}

std::string search_trial_line(const search_trial& t, const std::vector<goal>& goals, const nb::search::mlr_search* s) {
  const auto& m = t.measured;
  const test_result& r = t.result;
  const bool figures = r.ok;  // an interrupted trial keeps its figures (ok); an abandoned one has none
  const std::string load = t.n == 0 ? "unpaced" : fmt::format("{:.0f}", m.intended_load);
  const auto sent = static_cast<double>(r.sender.packets), received = static_cast<double>(r.receiver.packets);
  const std::string loss = figures && sent > 0 ? fmt::format("{:.6f}", (sent - received) / sent) : "-";
  std::string line = fmt::format("{:>4} {:>11} {:>6.2f} {:>11} {:>11} {:>10}", t.n, load, m.duration,
                                 figures ? fmt::format("{}", r.sender.packets) : "-",
                                 figures ? fmt::format("{}", r.receiver.packets) : "-", loss);
  // The MRR trial is no trial of the search, and an interrupted or repeated one was never told to it.
  const bool classed = s && t.n > 0 && !t.interrupted() && !t.repeated;
  for (const auto& g : goals)
    line += fmt::format(" {:<{}}", classed ? std::string(nb::search::to_string(s->classify(g, m.intended_load))) : "-",
                        class_width);
  return line + " " + trial_note(t) + "\n";
}

std::string search_results_text(const client_options& o, const nb::search::mlr_search* s, const search_end& end) {
  std::string out = "\n";
  const bool interrupted = !end.signal.empty();
  if (interrupted)
    out += fmt::format(
        "INTERRUPTED by {}: no trial started after the stop; a goal not yet regular has no established "
        "bounds\n",
        end.signal);
  if (s) {
    for (const auto& g : s->results()) out += goal_result_text(o, g, interrupted);
    out += fmt::format("Search: {} trial{} after the unpaced one{}, {:.1f} trial-seconds, {:.1f} s in all; ",
                       s->trials().size(), s->trials().size() == 1 ? "" : "s",
                       end.repeated ? fmt::format(" (and {} load-limited, run again)", end.repeated) : "",
                       s->trial_seconds(), end.elapsed_s);
  } else {
    out += "No search ran: ";
  }
  if (interrupted) out += fmt::format("stopped by {}\n", end.signal);
  else if (!end.cap.empty()) out += fmt::format("stopped before every goal was done: {}\n", end.cap);
  else out += "every goal done\n";
  return out;
}

json search_json(const client_options& o, const nb::search::mlr_search* s, const std::vector<search_trial>& trials,
                 const search_end& end) {
  const bool interrupted = !end.signal.empty();
  json j;
  j["search"] = nb::search::to_json(search_record_of(o, s, trials, end));
  j["search"].update(s ? nb::search::trials_json(*s) : json{{"trials", json::array()}});
  j["interrupted"] = interrupted;
  j["signal"] = interrupted ? json(end.signal) : json(nullptr);
  j["stopped_by_cap"] = end.cap.empty() ? json(nullptr) : json(end.cap);
  j["elapsed_s"] = end.elapsed_s;
  j["repeated_trials"] = end.repeated;
  j["mrr"] = trials.empty() ? json(nullptr) : trial_test_json(trials.front());
  j["tests"] = json::array();
  for (const auto& t : trials) j["tests"].push_back(trial_test_json(t));
  j["load"] = {{"unit", "packets per second offered by all streams together (intended load, aggregate)"},
               {"streams", o.streams},
               {"per_stream", "load / streams"},
               {"message_size", o.message_size},
               {"payload_mbit_per_s", "load x message_size x 8 / 10^6"}};
  j["options"] = options_json(o);
  j["options"]["search"] = search_options_json(o);
  return j;
}

}  // namespace nb::load
