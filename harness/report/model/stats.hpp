#pragma once
// Repeats of one measurement (`repeats = N`): the runs that differ only by their repeat number, with the
// mean, standard deviation, min, max and a 95 % confidence interval of the mean (Student's t), for the
// reports, their charts' error bars and `harness compare`.
#include "harness/report/model/aggregate.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace harness {

struct spread {
  int n = 0;  // values described
  double mean = 0, sd = 0, min = 0, max = 0;
  double ci_low = 0, ci_high = 0;  // 95 % interval of the mean; both equal the mean when n < 2
  bool has_interval() const { return n >= 2; }
};

// Two-sided 95 % quantile of Student's t with `dof` (>= 1) degrees of freedom.
double student_t95(int dof);
// Sample standard deviation (n - 1); an empty input gives n = 0 and zeros.
spread describe(const std::vector<double>& values);

// One measurement repeated: same test, role, message size, offered load and (pairs) route.
struct repeat_group {
  std::string key;               // the run ids' common part, without the -rN: "pps-m64", "tcp-m1400-a-to-b"
  std::string test, role, load;  // load: "" when unpaced, else the run's requested pps or rate
  std::string route;             // pairs: "from -> to"; "" otherwise
  topology topo = topology::fan_in;
  nb::test_kind kind = nb::test_kind::udp_stream;
  std::uint32_t message_size = 0;
  std::vector<std::size_t> runs;     // indexes into the summaries given, in repeat order (failed ones too)
  std::vector<std::string> run_ids;  // the same runs' ids, for summary.json (indexes mean nothing there)
  int failed = 0;                    // runs of the group that failed: not in the figures
  int interrupted = 0;               // of those, the ones stopped by a signal
  // Over the ok runs, of the run's plain sums (packets / duration per instance, added up).
  spread sent_pps, received_pps, sent_bps, received_bps, loss_percent;
  int ok_runs() const { return received_pps.n; }
};

// Search trials are left out; groups in the order of their first run. Every measurement is a group, one
// run or many: `harness compare` matches single runs too.
std::vector<repeat_group> group_repeats(const std::vector<run_summary>& runs);
// Whether two groups (of one results folder or of two) are the same measurement: test, role, kind,
// topology, message size, load and route.
bool same_measurement(const repeat_group& a, const repeat_group& b);
// The groups a run's reports show a spread for: at least two runs (the plan asked for repeats).
bool is_repeated(const repeat_group& g);
nlohmann::json to_json(const spread& s);
nlohmann::json to_json(const repeat_group& g);

}  // namespace harness
