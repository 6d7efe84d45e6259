#pragma once
// Integer arithmetic that stops at the type's limits instead of wrapping: a sum or product too large to
// hold is "more than any limit" (a budget) or "never" (a deadline), not a small or negative number.
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
