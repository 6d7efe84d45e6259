#pragma once
// Where a measurement's level shifted, over its series of results folders: a self-starting two-sided
// CUSUM (Hawkins 1987). Each point is standardized against the mean and standard deviation of the points
// before it since the last shift: (x_n - mean) / sd * sqrt((n - 1) / n) follows Student's t with n - 2
// degrees of freedom when the level holds and the noise is normal, and through its CDF and the normal
// quantile becomes an exact N(0, 1) residual, independent of the others. No in-control level or noise
// has to be known or guessed, which a series of five or twenty runs could not give.
//
// On those residuals: S+ = max(0, S+ + u - k), S- = max(0, S- - u - k), k = 0.5 (tuned to a shift of one
// standard deviation), an alarm when either exceeds h = 5. For i.i.d. N(0, 1) residuals that is an
// in-control average run length of ~930 points per side (Siegmund's approximation), ~465 for the two
// sides together: a false alarm on about 1 point in 465 (0.22 %), and on a flat series of n points at
// most (n - 2) / 465 (a 20-point series: <= 3.9 %; the first points cannot alarm at all, so it is less).
// Where the shift began: the least-squares split of the segment up to the alarm (the CUSUM's own
// estimate, after its last zero, drifts early); the scan restarts there, so a second shift later in
// the series is found too.
#include <cstddef>
#include <vector>

namespace harness::store {

struct cusum_options {
  double k = 0.5;
  double h = 5;
  // Points needed before the first residual: the mean and standard deviation of two points.
  std::size_t warmup = 2;
  // A series shorter than this has no change point: too few residuals for the sums to mean anything.
  std::size_t min_points = 5;
};

// The in-control average run length of the two-sided CUSUM above, in points (the README says it).
inline constexpr double cusum_in_control_arl = 465;

struct change_point {
  std::size_t begins = 0;        // index of the first point at the new level
  std::size_t detected = 0;      // index of the point at which the sum crossed h
  double before = 0, after = 0;  // the means of the segment before and of the points begins..detected
  double change_percent() const { return before != 0 ? (after - before) / before * 100 : 0; }
};

std::vector<change_point> find_change_points(const std::vector<double>& x, const cusum_options& o = {});

}  // namespace harness::store
