#pragma once
// Repeats of one measurement (`repeats = N`): the runs that differ only by their repeat number, with the
// mean, standard deviation, min, max and a 95 % confidence interval of the mean (Student's t), for the
// reports, their charts' error bars and `harness compare`.
#include "harness/report/aggregate.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace harness {

struct spread {
  int n = 0;                         // values described
  double mean = 0, sd = 0, min = 0, max = 0;
  double ci_low = 0, ci_high = 0;    // 95 % interval of the mean; both equal the mean when n < 2
  bool has_interval() const { return n >= 2; }
};

// Two-sided 95 % quantile of Student's t with `dof` (>= 1) degrees of freedom.
double student_t95(int dof);
// Sample standard deviation (n - 1); an empty input gives n = 0 and zeros.
spread describe(const std::vector<double>& values);

// One measurement repeated: same test, role, message size, offered load and (pairs) route.
struct repeat_group {
  std::string key;                   // the run ids' common part, without the -rN: "pps-device-server-m1"
  std::string test, role, load;      // load: "" when unpaced, else the run's requested pps or rate
  std::string route;                 // pairs: "from -> to"; "" otherwise
  topology topo = topology::fan_in;
  nb::test_kind kind = nb::test_kind::udp_stream;
  std::uint32_t message_size = 0;
  std::vector<std::size_t> runs;     // indexes into the summaries given, in repeat order (failed ones too)
  int failed = 0;                    // runs of the group that failed: not in the figures
  // Over the ok runs, of the run's plain sums (packets / duration per instance, added up).
  spread sent_pps, received_pps, sent_bps, received_bps, loss_percent;
};

// Search trials are left out; groups in the order of their first run.
std::vector<repeat_group> group_repeats(const std::vector<run_summary>& runs);
nlohmann::json to_json(const spread& s);
nlohmann::json to_json(const repeat_group& g);

}  // namespace harness
