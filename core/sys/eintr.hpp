#pragma once
// Header-only, so the data plane's loops pay no call of their own for it.
#include <cerrno>
#include <utility>

namespace nb {

// errno is as f left it.
template <class F>
inline auto retry_eintr(F&& f) noexcept(noexcept(f())) -> decltype(f()) {
  for (;;) {
    auto r = f();
    if (!(r < 0 && errno == EINTR)) return r;
  }
}

// A non-blocking call's "not now"; a loop on it re-checks its stop and deadline.
constexpr bool transient_errno(int e) noexcept { return e == EINTR || e == EAGAIN || e == EWOULDBLOCK; }

}  // namespace nb
