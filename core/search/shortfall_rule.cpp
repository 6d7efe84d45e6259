#include "core/search/shortfall_rule.hpp"

#include "core/search/load_stats.hpp"

#include <algorithm>

namespace nb::search {

bool shortfall_rule::run_again(const trial_result& t) {
  const bool again_at_same_load = short_at_ && same_load(*short_at_, t.intended_load);
  const bool at_their_limit = limited_before_ && t.intended_load > offered_in_full_;
  short_at_.reset();
  if (t.ran && t.load_limited && !again_at_same_load && !at_their_limit) {
    short_at_ = t.intended_load;
    return true;
  }
  limited_before_ = t.ran && t.load_limited;
  if (t.ran && !t.load_limited) offered_in_full_ = std::max(offered_in_full_, t.intended_load);
  return false;
}

}  // namespace nb::search
