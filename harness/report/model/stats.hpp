#pragma once
// Repeats of one measurement: mean, sd, min, max and the 95 % interval of the mean (Student's t).
#include "harness/report/model/aggregate.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace harness {

struct spread {
  int n = 0;
  double mean = 0, sd = 0, min = 0, max = 0;
  double ci_low = 0, ci_high = 0;  // equal to the mean when n < 2
  bool has_interval() const { return n >= 2; }
};

// Two-sided, `dof` >= 1.
double student_t95(int dof);
// Sample standard deviation (n - 1).
spread describe(const std::vector<double>& values);

// Same test, role, message size, offered load and (pairs) route.
struct repeat_group {
  std::string key;               // run ids without -rN: "pps-m64"
  std::string test, role, load;  // load: "" when unpaced
  std::string route;             // pairs: "from -> to"
  topology topo = topology::fan_in;
  nb::test_kind kind = nb::test_kind::udp_stream;
  std::uint32_t message_size = 0;
  std::vector<std::size_t> runs;  // into the summaries, in repeat order, failed too
  std::vector<std::string> run_ids;
  int failed = 0;
  int interrupted = 0;  // of those, stopped by a signal
  // Over the ok runs' sums.
  spread sent_pps, received_pps, sent_bps, received_bps, loss_percent;
  int ok_runs() const { return received_pps.n; }
};

// Search trials left out; single runs are groups too (compare matches them).
std::vector<repeat_group> group_repeats(const std::vector<run_summary>& runs);
bool same_measurement(const repeat_group& a, const repeat_group& b);
// At least two runs.
bool is_repeated(const repeat_group& g);
nlohmann::json to_json(const spread& s);
nlohmann::json to_json(const repeat_group& g);

}  // namespace harness
