#pragma once
// A system call a signal interrupted (-1 with errno EINTR) did nothing, and the same call again is right.
// Header-only so the data plane's send and receive loops call it without a call or allocation of its own.
#include <cerrno>
#include <utility>

namespace nb {

// Calls f() until it returns anything but -1 with errno EINTR, and returns that; errno is as f left it.
template <class F>
inline auto retry_eintr(F&& f) noexcept(noexcept(f())) -> decltype(f()) {
  for (;;) {
    auto r = f();
    if (!(r < 0 && errno == EINTR)) return r;
  }
}

// A non-blocking call's "not now": interrupted, or nothing to read or no room to write yet. A loop that
// goes round on it re-checks its stop and deadline before the next try.
constexpr bool transient_errno(int e) noexcept { return e == EINTR || e == EAGAIN || e == EWOULDBLOCK; }

}  // namespace nb
