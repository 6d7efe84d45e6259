// The rate searches in the reports: per search, MRR, NDR and PDR side by side in pps and Mbit/s with
// the final trial that confirmed each, then every trial in the order it ran.
#include "core/base/units.hpp"
#include "harness/report/report.hpp"

#include <fmt/format.h>

namespace harness {
namespace {

using nlohmann::json;

std::string measure_name(double loss_pct) {
  if (loss_pct == 0) return "NDR (loss 0 %)";
  if (loss_pct == 0.5) return "PDR (loss <= 0.5 %)";
  return fmt::format("loss <= {:g} %", loss_pct);
}

std::string trial_figures(const json& t) {
  if (t.is_null()) return "";
  if (!t.at("ok").get<bool>()) return "FAILED: " + t.value("failure", "");
  return fmt::format("{} sent, {} received, loss {:.4f} %", t.at("sent").get<std::uint64_t>(),
                     t.at("received").get<std::uint64_t>(), t.at("loss_pct").get<double>());
}

void add_rows(text_table& t, const json& s) {
  const json& search = s.at("search");
  const auto m = s.at("message_size").get<std::uint32_t>();
  const std::vector<std::string> head{s.at("role").get<std::string>(), s.at("test").get<std::string>(), std::to_string(m)};
  auto row = [&](std::vector<std::string> cells) {
    cells.insert(cells.begin(), head.begin(), head.end());
    t.add(std::move(cells));
  };
  if (const json& mrr = search.at("mrr"); !mrr.is_null()) {
    if (mrr.at("ok").get<bool>())
      row({"MRR (unpaced)", fmt_pps(mrr.at("received_pps").get<double>()),
           fmt_mbps(mrr.at("received_bits_per_second").get<double>()), trial_figures(mrr),
           fmt::format("offered {} pps unpaced", fmt_pps(mrr.at("sent_pps").get<double>()))});
    else
      row({"MRR (unpaced)", "**FAILED**", "", trial_figures(mrr), ""});
  }
  for (const json& r : search.at("results")) {
    const std::string name = measure_name(r.at("loss_target_pct").get<double>());
    const std::string note = r.at("note").get<std::string>();
    if (r.at("rate_pps").is_null()) {
      row({name, r.value("interrupted", false) ? "not established (interrupted)" : "none", "", "", note});
      continue;
    }
    row({name, fmt_pps(r.at("rate_pps").get<double>()), fmt_mbps(r.at("rate_bits_per_second").get<double>()),
         trial_figures(r.at("final")), note});
  }
}

std::string trial_table(const json& s) {
  text_table t({"trial", "phase", "offered pps", "sent pps", "received pps", "received Mbit/s", "loss %", "limit", "note"});
  int k = 0;
  for (const json& x : s.at("search").at("trials")) {
    const double offered = x.at("offered_pps").get<double>();
    std::string phase = x.at("phase").get<std::string>();
    if (x.contains("loss_target_pct")) phase += fmt::format(" ({:g} %)", x.at("loss_target_pct").get<double>());
    std::vector<std::string> row{std::to_string(++k), phase, offered > 0 ? fmt_pps(offered) : "unpaced"};
    if (!x.at("ok").get<bool>()) {
      row.insert(row.end(), {"FAILED", "", "", "", "", x.value("failure", "")});
    } else {
      row.insert(row.end(), {fmt_pps(x.at("sent_pps").get<double>()), fmt_pps(x.at("received_pps").get<double>()),
                             fmt_mbps(x.at("received_bits_per_second").get<double>()),
                             fmt::format("{:.4f}", x.at("loss_pct").get<double>()), x.value("limit", ""),
                             x.at("sender_limited").get<bool>() ? "sender-limited: not a pass" : ""});
    }
    t.add(row);
  }
  return t.markdown();
}

text_table search_table(const std::vector<json>& searches) {
  text_table t({"role", "test", "m (bytes)", "measure", "pps", "Mbit/s", "trial at that rate", "note"});
  for (const auto& s : searches) add_rows(t, s);
  return t;
}

}  // namespace

std::string search_markdown(const std::vector<json>& searches) {
  if (searches.empty()) return "";
  std::string out =
      "## Rate search: MRR, NDR and PDR\n\n"
      "MRR is what one unpaced trial received (the procedure's own figure). NDR and PDR are the highest aggregate "
      "rates offered, split evenly over the instances, whose loss stayed at 0 % and within 0.5 % (RFC 2544 throughput; "
      "FD.io CSIT's MLRsearch), each confirmed by a full-length final trial. A trial whose senders did not reach "
      "the offered rate (sender-limited) never counts as a pass.\n\n";
  out += search_table(searches).markdown() + "\n";
  for (const auto& s : searches)
    out += fmt::format("### Search {}: trials\n\n{}\n", s.at("id").get<std::string>(), trial_table(s));
  return out;
}

std::string search_console(const std::vector<json>& searches) {
  if (searches.empty()) return "";
  return "\nRate search (aggregate offered rate; NDR = no loss, PDR = loss <= 0.5 %)\n" + search_table(searches).text();
}

}  // namespace harness
