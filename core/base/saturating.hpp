#pragma once
// Stops at the type's limits: an overflowing budget or deadline means "unlimited" or "never", not negative.
#include <limits>
#include <type_traits>

namespace nb {

template <class T>
  requires std::is_integral_v<T>
constexpr T saturating_add(T a, T b) noexcept {
  T r{};
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b < T{} ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
}

template <class T>
  requires std::is_integral_v<T>
constexpr T saturating_mul(T a, T b) noexcept {
  T r{};
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < T{}) != (b < T{}) ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
}

}  // namespace nb
