// Kernels the static release names (packaging/INSTALL.static.in: "Linux 3.10 or newer", CentOS 7) lack
// socket options this machine's kernel has. Each case runs in a child process under a seccomp filter that
// answers one option the way such a kernel does (ENOPROTOOPT, as sock_getsockopt/sock_setsockopt and
// udp_lib_getsockopt/udp_lib_setsockopt do for an option they do not know), and checks that the code
// copes as its header promises. The child forgets the parent's probes (core/sys/kernel_features.hpp), so it
// probes under the filter as a process on such a kernel would.
#include "core/data/udp_io.hpp"
#include "core/sys/kernel_features.hpp"
#include "core/sys/socket.hpp"
#include "netserve/server/udp_port.hpp"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/udp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

using namespace nb;

namespace {

// Runs `body` in a child whose `syscall_nr` (getsockopt or setsockopt) fails with ENOPROTOOPT for
// (`level`, `option`), as a kernel that predates the option. The child's exit status: 0 when `body`
// returned true, 1 when it returned false, 2 when it threw, 3 when the filter could not be installed.
int in_old_kernel(long syscall_nr, int level, int option, const std::function<bool()>& body) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(syscall_nr), 0, 5),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),  // level (low word)
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(level), 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])),  // optname (low word)
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(option), 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOPROTOOPT),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
      ::_exit(3);
    forget_kernel_probes();
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

endpoint free_local_port() { return endpoint::local_of(bind_udp(endpoint::from_numeric("127.0.0.1", 0)).get()); }

// Sets NETBENCH_DISABLE for one test case and forgets the probes on both ends, so no other case sees it.
class disable_switch {
 public:
  explicit disable_switch(const char* value) {
    if (const char* old = std::getenv(kernel_disable_variable)) old_ = old;
    ::setenv(kernel_disable_variable, value, 1);
    forget_kernel_probes();
  }
  ~disable_switch() {
    if (old_) ::setenv(kernel_disable_variable, old_->c_str(), 1);
    else ::unsetenv(kernel_disable_variable);
    forget_kernel_probes();
  }
  disable_switch(const disable_switch&) = delete;
  disable_switch& operator=(const disable_switch&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("socket_drops on a kernel without SO_MEMINFO (before 4.12) reads 0 drops, not a failure",
          "[unit][old-kernel]") {
  // Were it to throw, every forward UDP test on such a kernel would fail in netserve's attach
  // (udp_port::attach), every reverse one in netload's socket setup (found in review).
  const int status = in_old_kernel(SYS_getsockopt, SOL_SOCKET, SO_MEMINFO, [] {
    fd_handle fd = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
    return socket_drops(fd.get()) == 0;
  });
  REQUIRE(status != 3);  // the filter is in place
  CHECK(status == 0);
}

TEST_CASE("without SO_MEMINFO (before 4.12) a port's batching says its drop count is unknown", "[unit][old-kernel]") {
  // Its 0 drops are no count: the result must not read them as "the socket dropped nothing".
  const int status = in_old_kernel(SYS_getsockopt, SOL_SOCKET, SO_MEMINFO, [] {
    serve::udp_port port(serve::bind_lanes(free_local_port(), {-1}, 1 << 20), false);
    return !kernel_has(kernel_feature::meminfo) && port.batching() == "recvmmsg, no drop count";
  });
  REQUIRE(status != 3);
  CHECK(status == 0);
}

TEST_CASE("netserve's receive lanes bind on a kernel without SO_ATTACH_REUSEPORT_CBPF (before 4.5)",
          "[unit][old-kernel]") {
  // Two lanes (netserve's default on any machine of two CPUs or more) steer by CPU with a reuseport BPF
  // program, which such a kernel refuses: netserve could not bind a single port and did not start (found
  // in review). The lanes now share the port by the kernel's hash, none on a CPU of its own, and say so.
  const int status = in_old_kernel(SYS_setsockopt, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, [] {
    std::vector<serve::udp_lane> lanes = serve::bind_lanes(free_local_port(), {0, 1}, 1 << 20);
    if (lanes.size() != 2 || lanes[0].cpu != -1 || lanes[1].cpu != -1) return false;
    serve::udp_port port(std::move(lanes), false);
    return port.batching() == "recvmmsg, lanes by kernel hash";
  });
  REQUIRE(status != 3);
  CHECK(status == 0);
}

TEST_CASE("on a kernel without UDP GSO (before 4.18) the sender uses sendmmsg", "[unit][old-kernel]") {
  // Such a kernel skips the UDP_SEGMENT control message without a word: each GSO buffer would leave as
  // one oversized datagram, ~98 % "loss" in a result that says ok (found in review). Only the socket
  // option tells, and it is what the filter refuses here.
  const int status = in_old_kernel(SYS_getsockopt, SOL_UDP, UDP_SEGMENT, [] {
    fd_handle fd = connect_udp(free_local_port());
    udp_batch_sender sender(fd.get(), 64, 64, true);
    return sender.mode() == "sendmmsg";
  });
  REQUIRE(status != 3);
  CHECK(status == 0);
}

TEST_CASE("on a kernel without UDP GRO (before 5.0) a port's batching says recvmmsg", "[unit][old-kernel]") {
  // The lanes' receivers fell back to recvmmsg by themselves, but the result claimed "gro".
  const int status = in_old_kernel(SYS_setsockopt, SOL_UDP, UDP_GRO, [] {
    serve::udp_port port(serve::bind_lanes(free_local_port(), {-1}, 1 << 20), true);
    fd_handle fd = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
    udp_batch_receiver rx(fd.get(), 8, true);
    return port.batching() == "recvmmsg" && rx.mode() == "recvmmsg";
  });
  REQUIRE(status != 3);
  CHECK(status == 0);
}

TEST_CASE("NETBENCH_DISABLE makes each named probe report its feature missing, and says so", "[unit][old-kernel]") {
  {
    disable_switch off(" gso,cbpf ");
    CHECK_FALSE(kernel_has(kernel_feature::udp_gso));
    CHECK_FALSE(kernel_has(kernel_feature::reuseport_cbpf));
    std::FILE* sink = std::tmpfile();
    REQUIRE(sink);
    report_kernel_fallbacks("test", {kernel_feature::udp_gso, kernel_feature::reuseport_cbpf}, sink);
    std::string said(4096, '\0');
    std::rewind(sink);
    said.resize(std::fread(said.data(), 1, said.size(), sink));
    std::fclose(sink);
    CHECK(said.find("test: no UDP GSO (UDP_SEGMENT, Linux 4.18) (disabled by NETBENCH_DISABLE): UDP is sent with "
                    "sendmmsg") != std::string::npos);
    CHECK(said.find("test: no reuseport BPF steering") != std::string::npos);
  }
  {
    disable_switch off("gso,grow");  // a typo must not leave a test on the path it meant to avoid
    CHECK_THROWS_WITH(report_kernel_fallbacks("test", {kernel_feature::udp_gso}, stderr),
                      Catch::Contains("'grow' names no kernel feature"));
  }
}
