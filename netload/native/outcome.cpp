#include "netload/native/outcome.hpp"

#include "netload/native/user_stop.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace nb::load {

int exit_status(const test_result& r, std::string_view label) {
  if (r.interrupted) {
    if (!r.ok) fmt::print(stderr, "netload: {}{}\n", label, r.error);
    else if (!r.loss.reconciles) fmt::print(stderr, "netload: {}counts do not reconcile: {}\n", label, r.loss.note);
    return interrupted_status(r.interrupted->signal);
  }
  if (!r.ok) {
    fmt::print(stderr, "netload: {}{}\n", label, r.error);
    return failed;
  }
  if (!r.loss.reconciles) {
    fmt::print(stderr, "netload: {}counts do not reconcile: {}\n", label, r.loss.note);
    return unreconciled;
  }
  if (r.target && !r.target->met) {
    const char* what = !r.target->ceiling ? "target missed"
                       : r.omit           ? "ceiling exceeded (counted from the start, the left-out seconds included)"
                                          : "ceiling exceeded";
    fmt::print(stderr, "netload: {}paced {}: {:.1f} of {:.1f} {} sent ({:+.2f} %)\n", label, what,
               r.target->achieved_pps, r.target->requested_pps, r.kind == test_kind::tcp_stream ? "messages/s" : "pps",
               r.target->error_percent);
    return target_missed;
  }
  return ok;
}

std::string interrupted_line(const test_result& r) {
  if (!r.interrupted) return {};
  const interruption& i = *r.interrupted;
  const double omit_asked = r.options.is_object() ? r.options.value("omit_s", 0.0) : 0.0;
  std::string covers = "the figures below cover the time measured";
  if (r.omit)
    covers = fmt::format("the figures below cover the {:.2f} s after the omitted first {:g} s",
                         i.measured_s - r.omit->seconds, r.omit->seconds);
  else if (omit_asked > 0)
    covers = fmt::format("stopped inside the first {:g} s that --omit leaves out: the figures below include them",
                         omit_asked);
  return fmt::format("INTERRUPTED by {} after {:.2f} s of {:.2f} s: {}\n", i.signal, i.measured_s, i.planned_s, covers);
}

int worse(int a, int b) {
  // A stop first: the user must see that the figures are partial.
  auto rank = [](int s) {
    return is_interrupted_status(s) ? 5
           : s == failed            ? 4
           : s == usage             ? 3
           : s == unreconciled      ? 2
           : s == target_missed     ? 1
                                    : 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace nb::load
