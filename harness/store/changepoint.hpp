#pragma once
// Where a measurement's level shifted over its results folders: a self-starting two-sided CUSUM
// (Hawkins 1987), which needs no in-control level or noise guessed (docs/changepoint.md).
#include <cstddef>
#include <vector>

namespace harness::store {

struct cusum_options {
  double k = 0.5;  // tuned to a shift of one standard deviation
  double h = 5;
  std::size_t warmup = 2;      // points before the first residual
  std::size_t min_points = 5;  // a shorter series has no change point
};

// The defaults' in-control average run length, in points.
inline constexpr double cusum_in_control_arl = 465;

struct change_point {
  std::size_t begins = 0;        // the first point at the new level
  std::size_t detected = 0;      // where a sum crossed h
  double before = 0, after = 0;  // means before `begins` and over begins..detected
  double change_percent() const { return before != 0 ? (after - before) / before * 100 : 0; }
};

std::vector<change_point> find_change_points(const std::vector<double>& x, const cusum_options& o = {});

}  // namespace harness::store
