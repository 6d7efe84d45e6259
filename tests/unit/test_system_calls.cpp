// System calls whose failure must be seen: a socket option on a bad descriptor throws rather than reading
// as 0, the peer of an unconnected socket throws rather than reading as an empty address, and
// sleep_until_ns returns on an instant clock_nanosleep refuses rather than retrying for ever.
#include "core/base/clock.hpp"
#include "core/data/udp_io.hpp"
#include "core/sys/endpoint.hpp"
#include "core/sys/socket.hpp"

#include "core/sys/eintr.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <memory>
#include <system_error>
#include <thread>

using namespace nb;

TEST_CASE("a socket call on a descriptor that is no socket throws, naming the call") {
  CHECK_THROWS_WITH(recv_buffer(-1),
                    Catch::Contains("getsockopt(SO_RCVBUF)") && Catch::Contains("Bad file descriptor"));
  CHECK_THROWS_AS(set_recv_buffer(-1, 1 << 20), std::system_error);
  CHECK_THROWS_AS(send_buffer(-1), std::system_error);
  CHECK_THROWS_AS(tcp_mss(-1), std::system_error);
  CHECK_THROWS_AS(socket_drops(-1), std::system_error);
  CHECK_THROWS_AS(set_receive_timeout(-1, 1'000'000), std::system_error);
  CHECK_THROWS_AS(endpoint::local_of(-1), std::system_error);
}

TEST_CASE("an unconnected socket has no peer (thrown) and no path MTU (0, by design)") {
  fd_handle rx = bind_udp(endpoint::from_numeric("127.0.0.1", 0));
  CHECK_THROWS_AS(endpoint::peer_of(rx.get()), std::system_error);
  CHECK(path_mtu(rx.get(), AF_INET) == 0);
  fd_handle tx = connect_udp(endpoint::local_of(rx.get()));
  CHECK(endpoint::peer_of(tx.get()) == endpoint::local_of(rx.get()));
  CHECK(path_mtu(tx.get(), AF_INET) > 0);
}

TEST_CASE("sleep_until_ns returns for an instant clock_nanosleep refuses instead of retrying for ever") {
  // On a thread of its own, so that a retry loop fails the test instead of hanging ctest to its timeout
  // (the detached thread dies with the process).
  auto returned = std::make_shared<std::promise<void>>();
  auto done = returned->get_future();
  std::thread([returned] {
    sleep_until_ns(CLOCK_MONOTONIC, -1);                 // before the clock's zero: past
    sleep_until_ns(CLOCK_THREAD_CPUTIME_ID, mono_ns());  // a clock it cannot sleep on (EINVAL)
    returned->set_value();
  }).detach();
  REQUIRE(done.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
}

namespace {
std::atomic<int> interruptions{0};
void count_interruption(int) { interruptions.fetch_add(1); }
}  // namespace

TEST_CASE("retry_eintr calls again only after EINTR, and returns any other outcome as it came") {
  int calls = 0;
  CHECK(retry_eintr([&] {
          ++calls;
          if (calls < 3) {
            errno = EINTR;
            return -1;
          }
          return 5;
        }) == 5);
  CHECK(calls == 3);
  calls = 0;
  CHECK(retry_eintr([&] {
          ++calls;
          errno = EAGAIN;
          return -1;
        }) == -1);
  CHECK(errno == EAGAIN);
  CHECK(calls == 1);
  CHECK(transient_errno(EINTR));
  CHECK(transient_errno(EAGAIN));
  CHECK_FALSE(transient_errno(ECONNRESET));
}

TEST_CASE("a blocking read a signal interrupts is retried and gets the data that comes after") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  struct sigaction sa {};
  struct sigaction old {};
  sa.sa_handler = count_interruption;
  sa.sa_flags = 0;  // no SA_RESTART: the read returns EINTR
  ::sigemptyset(&sa.sa_mask);
  REQUIRE(::sigaction(SIGUSR1, &sa, &old) == 0);
  interruptions = 0;
  const pthread_t reader = ::pthread_self();
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::pthread_kill(reader, SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const char c = 'x';
    CHECK(::write(fds[1], &c, 1) == 1);
  });
  char got = 0;
  const ssize_t n = retry_eintr([&] { return ::read(fds[0], &got, 1); });
  writer.join();
  ::sigaction(SIGUSR1, &old, nullptr);
  ::close(fds[0]);
  ::close(fds[1]);
  CHECK(n == 1);
  CHECK(got == 'x');
  CHECK(interruptions == 1);
}
