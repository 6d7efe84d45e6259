// A search run: trial after trial, each an ordinary run with its own raw/ folder, chosen by the rate
// search (harness/run/search.hpp) from what the trials before it measured. raw/<run>/search.json holds the
// search's state after every trial, so an interrupted search still shows how far it got.
#include "core/base/units.hpp"
#include "harness/report/results.hpp"
#include "harness/run/runner.hpp"
#include "harness/run/search.hpp"

#include <fmt/format.h>

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json search_record(const run_spec& r, int order, const rate_search& s) {
  return {{"id", r.id}, {"test", r.test}, {"role", r.role}, {"topology", to_string(r.topo)}, {"kind", nb::to_string(r.kind)},
          {"message_size", r.message_size}, {"instances", r.instances.size()}, {"order", order},
          {"search", s.to_json(r.message_size)}};
}

std::string describe(const trial_outcome& t, std::uint32_t m) {
  const std::string offered = t.offered_pps > 0 ? fmt::format("{} pps", nb::format_si(t.offered_pps)) : "unpaced";
  if (!t.ok) return fmt::format("offered {}: FAILED: {}", offered, t.failure);
  return fmt::format("offered {}: sent {} pps, received {} pps ({:.2f} Mbit/s), loss {:.4f} %{}{}", offered,
                     nb::format_si(t.sent_pps), nb::format_si(t.received_pps), t.received_pps * m * 8 / 1e6, t.loss_pct,
                     t.sender_limited ? " - sender-limited, not a pass" : "",
                     t.limit.empty() ? "" : fmt::format(" [limit: {}]", t.limit));
}

}  // namespace

asio::awaitable<void> runner::run_search(const run_spec& r) {
  rate_search search(*r.spec->search, r.instances.size());
  const fs::path dir = dir_ / "raw" / r.id;
  fs::create_directories(dir);
  const int order = order_;
  int k = 0;
  while (auto n = search.next()) {
    if (k > 0) co_await settle_pause();
    if (cancelled_) break;  // no trial starts after a stop
    const std::string id = fmt::format("{}-s{:02}-{}", r.id, ++k, phase_name(n->phase));
    json tag = {{"of", r.id}, {"phase", phase_name(n->phase)}, {"offered_pps", n->offered_pps}};
    if (n->target_pct) tag["loss_target_pct"] = *n->target_pct;
    const run_spec trial = trial_of(r, id, n->offered_pps, n->duration, tag);  // named: GCC 12 and temporaries across co_await
    co_await run_one(trial);
    if (cancelled_) break;  // an interrupted trial is recorded as such, and teaches the search nothing
    run_summary measured = summarize(load_run(dir_ / "raw" / id));
    if (!measured.run.error.empty()) {  // the trial never ran (its netserve did not start): nothing to learn
      fmt::print(stderr, "harness: search {} stopped: trial {} failed: {}\n", r.id, k, measured.run.error);
      break;
    }
    auto outcome = outcome_of(std::move(measured), n->phase, n->offered_pps, n->target_pct, n->duration);
    fmt::print(stderr, "harness: search {} trial {} ({}{}): {}\n", r.id, k, phase_name(n->phase),
               n->target_pct ? fmt::format(", loss target {:g} %", *n->target_pct) : "", describe(outcome, r.message_size));
    search.record(std::move(outcome));
    write_json(dir / "search.json", search_record(r, order, search));
  }
  json record = search_record(r, order, search);
  // A stop leaves rates the search had not yet established: said so, never read as "no rate passed".
  if (cancelled_) {
    record["interrupted"] = true;
    for (json& res : record["search"]["results"])
      if (res["rate_pps"].is_null()) res["interrupted"] = true;
  }
  write_json(dir / "search.json", record);
  for (const auto& res : search.results())
    fmt::print(stderr, "harness: search {}: loss <= {:g} %: {}{}\n", r.id, res.loss_target_pct,
               res.rate_pps ? fmt::format("{} pps ({:.2f} Mbit/s)", nb::format_si(*res.rate_pps),
                                          *res.rate_pps * r.message_size * 8 / 1e6)
               : cancelled_ ? "not established: the search was interrupted"
                            : "none",
               res.note.empty() ? "" : " - " + res.note);
  write_reports(dir_);
}

}  // namespace harness
