#pragma once
// `harness watch --every`: a period written as people write it, "30s", "15m", "1h", "2h30m", "1h30m15s".
#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

namespace harness::watch {

// Components in the order h, m, s, each at most once, each a whole number; at least 1 s, at most 31 days
// (a longer wait is a cron job's, and the sum stays far from any overflow). Throws std::invalid_argument
// with the reason and the accepted forms.
std::chrono::seconds parse_period(std::string_view text);
// The period back as "2h30m", "15m", "45s" (the shortest of the accepted forms).
std::string period_text(std::chrono::seconds s);

}  // namespace harness::watch
