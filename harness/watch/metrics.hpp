#pragma once
// The last completed run of `harness watch` as OpenMetrics text (the format Prometheus scrapes), from the
// same structs as summary.json and the store (run_summary, the searches' JSON, the store's judgement).
#include "harness/report/model/aggregate.hpp"
#include "harness/store/trend/regress.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::watch {

struct run_counts {
  std::uint64_t runs = 0, failed = 0, interrupted = 0;  // results folders the watch made, and how they ended
};

struct completed_run {
  std::string plan;
  std::vector<run_summary> runs;            // as summarize() made them for summary.json
  std::vector<nlohmann::json> searches;     // as load_searches() read them
  std::optional<store::judgement> verdict;  // none with --no-db
};

// Every family of the exposition (HELP and TYPE) even before a first run, then `# EOF`.
std::string render_openmetrics(const run_counts& counts, const std::optional<completed_run>& last);
// A label value or HELP text as OpenMetrics wants it: backslash and double quote escaped (\\, \"), and
// nothing raw that could reach a terminal or break a scrape: a control character (C0, DEL, C1) is the
// text nb::printable shows for it (\n, \r, \t, \x1b, written \\n, \\x1b), as is a byte of no UTF-8
// character. A name without those reads back as it is.
std::string escape_label_value(std::string_view v);

}  // namespace harness::watch
