// The harness's process group: a stop reaches every member and spares those the caller keeps back, a
// member that ignores SIGTERM is killed after kill_after, and a process that has left is never signalled.
// The coroutines only record what happened; the checks run after them (Catch's macros inside a coroutine
// do not compile with GCC 12).
#include "harness/launch/process_group.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
namespace asio = boost::asio;
using harness::process_group;

namespace {

// Runs body(group) on a fresh io_context to its end; the group kills 300 ms after a stop.
// A body still waiting after 20 s fails the test; its processes are killed first, so that it ends while
// the group and the io_context it uses still exist.
template <class Body>
void with_group(Body body) {
  asio::io_context io;
  process_group g(io, 300ms);
  std::exception_ptr failure;
  bool done = false;
  asio::co_spawn(io, body(g), [&](std::exception_ptr e) {
    failure = e;
    done = true;
  });
  io.run_for(20s);
  const bool in_time = done;
  if (!done) {
    g.kill();
    io.restart();
    io.run_for(10s);
  }
  if (failure) std::rethrow_exception(failure);
  REQUIRE(in_time);
}

asio::awaitable<void> after(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

std::chrono::steady_clock::time_point in(std::chrono::seconds s) { return std::chrono::steady_clock::now() + s; }
std::vector<std::string> sh(const char* script) { return {"sh", "-c", script}; }

}  // namespace

TEST_CASE("process group: stop() ends every member with SIGTERM, sparing those kept back", "[harness][process]") {
  nb::process_outcome stopped_outcome;
  bool spared_ran_on = false;
  with_group([&](process_group& g) -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    const auto sleep30 = sh("exec sleep 30");
    nb::child_process stopped(ex, sleep30), spared(ex, sleep30);
    process_group::membership a(g, stopped), b(g, spared);
    co_await after(100ms);
    g.stop([&](nb::child_process* c) { return c == &spared; });
    stopped_outcome = co_await stopped.finish(in(5s));
    spared_ran_on = spared.running();
    spared.request_stop();
    co_await spared.finish(in(5s));
  });
  CHECK(stopped_outcome.exit_code == 128 + SIGTERM);
  CHECK(spared_ran_on);
}

TEST_CASE("process group: a member that ignores SIGTERM is killed after kill_after", "[harness][process]") {
  std::optional<std::string> armed;
  nb::process_outcome o;
  bool killed = false;
  with_group([&](process_group& g) -> asio::awaitable<void> {
    const auto stubborn_argv = sh("trap '' TERM; echo armed; exec sleep 30");
    nb::child_process stubborn(co_await asio::this_coro::executor, stubborn_argv);
    process_group::membership m(g, stubborn);
    armed = co_await stubborn.read_line(in(5s));
    g.stop();
    o = co_await stubborn.finish(in(10s));
    killed = g.killed();
  });
  REQUIRE(armed == std::optional<std::string>("armed"));
  CHECK_FALSE(o.timed_out);  // the group's SIGKILL, not the deadline's
  CHECK(o.exit_code == 128 + SIGKILL);
  CHECK(killed);
}

TEST_CASE("process group: run() is a member while it runs, and one that left is never signalled",
          "[harness][process]") {
  nb::process_outcome exited, fed;
  bool left = false, killed_without_members = true;
  with_group([&](process_group& g) -> asio::awaitable<void> {
    const auto exit3 = sh("exit 3");
    const auto check_input = sh("read l; test \"$l\" = hello");
    const auto truth = sh("true");
    const auto input = std::string("hello\n");
    std::function<void()> on_leave = [&left] { left = true; };
    exited = co_await g.run(exit3, 5s);
    {
      nb::child_process p(co_await asio::this_coro::executor, truth);
      process_group::membership m(g, p, on_leave);
      co_await p.finish(in(5s));
    }
    g.stop();  // no member: nothing signalled, nothing armed
    co_await after(500ms);
    killed_without_members = g.killed();
    fed = co_await g.run(check_input, 5s, &input);
  });
  CHECK(exited.exit_code == 3);
  CHECK(left);
  CHECK_FALSE(killed_without_members);
  CHECK(fed.exit_code == 0);
}

namespace {

asio::awaitable<int> answer_later(asio::io_context& io, int v) {
  asio::steady_timer t(io, 10ms);
  co_await t.async_wait(asio::use_awaitable);
  if (v < 0) throw std::runtime_error("no answer");
  co_return v;
}

}  // namespace

TEST_CASE("run_on returns the coroutine's value or rethrows its failure, and runs at_end either way",
          "[harness][process]") {
  asio::io_context io;
  int ended = 0;
  // What else keeps the io_context running (a signal set in the commands) is closed by at_end.
  asio::steady_timer held(io, std::chrono::steady_clock::time_point::max());
  held.async_wait([](boost::system::error_code) {});
  CHECK(nb::run_on(io, answer_later(io, 7), [&] {
          ++ended;
          held.cancel();
        }) == 7);
  CHECK(ended == 1);
  held.expires_at(std::chrono::steady_clock::time_point::max());
  held.async_wait([](boost::system::error_code) {});
  CHECK_THROWS_WITH(nb::run_on(io, answer_later(io, -1),
                               [&] {
                                 ++ended;
                                 held.cancel();
                               }),
                    "no answer");
  CHECK(ended == 2);
  CHECK(nb::run_on(io, answer_later(io, 3)) == 3);
}
