// Kernels the static release names (packaging/INSTALL.static.in: "Linux 3.10 or newer", CentOS 7) lack
// socket options this machine's kernel has. Each case runs in a child process under a seccomp filter that
// answers one option the way such a kernel does (ENOPROTOOPT, as sock_getsockopt/sock_setsockopt do for
// an option they do not know), and checks that the code copes as its header promises.
#include "core/socket.hpp"

#include <catch2/catch.hpp>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <functional>

using namespace nb;

namespace {

// Runs `body` in a child whose `syscall_nr` (getsockopt or setsockopt) fails with ENOPROTOOPT for
// (SOL_SOCKET, `option`), as a kernel that predates the option. The child's exit status: 0 when `body`
// returned true, 1 when it returned false, 2 when it threw, 3 when the filter could not be installed.
int in_old_kernel(long syscall_nr, int option, const std::function<bool()>& body) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(syscall_nr), 0, 5),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),  // level (low word)
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOL_SOCKET, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])),  // optname (low word)
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(option), 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOPROTOOPT),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
      ::_exit(3);
    try {
      ::_exit(body() ? 0 : 1);
    } catch (...) {
      ::_exit(2);
    }
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("socket_drops on a kernel without SO_MEMINFO (before 4.12) reads 0 drops, not a failure",
          "[unit][old-kernel]") {
  // Were it to throw, every forward UDP test on such a kernel would fail in netserve's attach
  // (udp_port::attach), every reverse one in netload's socket setup (found in review).
  const int status = in_old_kernel(SYS_getsockopt, SO_MEMINFO, [] {
    fd_handle fd = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
    return socket_drops(fd.get()) == 0;
  });
  REQUIRE(status != 3);  // the filter is in place
  CHECK(status == 0);
}
