// Launchers and child processes: argv stays argv (the one ssh string is quoted so a POSIX shell gives
// back exactly the words), deadlines kill, exit status and output are captured.
#include "harness/launch/launcher.hpp"
#include "harness/process/process.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

using namespace std::chrono_literals;

TEST_CASE("harness launcher: the ssh command line survives a POSIX shell word for word", "[harness][launcher]") {
  const std::vector<std::string> words{"printf", "[%s]", "a b", "it's", "$HOME", "`id`", "; rm -rf /", "\"q\"", ""};
  harness::host h;
  h.name = "x";
  h.address = "127.0.0.1";
  h.launcher = harness::launcher_kind::ssh;
  const auto l = harness::make_launcher(h, "", "/tmp/ctl");
  const auto argv = l->wrap(words);
  REQUIRE(argv.size() > 3);
  CHECK(argv[argv.size() - 2] == "127.0.0.1");
  CHECK(std::find(argv.begin(), argv.end(), "BatchMode=yes") != argv.end());
  // What the remote sshd does with that last string: sh -c.
  const auto o = nb::run_blocking({"sh", "-c", argv.back()}, 5s);
  CHECK(o.exit_code == 0);
  CHECK(o.stdout_text == "[a b][it's][$HOME][`id`][; rm -rf /][\"q\"][]");
}

TEST_CASE("harness launcher: netns wraps with ip netns exec, local leaves argv alone", "[harness][launcher]") {
  harness::host h;
  h.address = "198.18.0.1";
  h.launcher = harness::launcher_kind::netns;
  h.netns = "lab1";
  const auto ns = harness::make_launcher(h, "/opt/bin", "");
  CHECK(ns->wrap({"/opt/bin/netload", "-H", "x"}) ==
        std::vector<std::string>{"ip", "netns", "exec", "lab1", "/opt/bin/netload", "-H", "x"});
  h.launcher = harness::launcher_kind::local;
  const auto local = harness::make_launcher(h, "", "");
  CHECK(local->wrap({"netload", "--version"}) == std::vector<std::string>{"netload", "--version"});
}

TEST_CASE("harness launcher: the remote pid line is read whole, never a prefix of junk", "[harness][launcher]") {
  // The line the ssh wrapper's script prints, read back by the runner to stop the program there.
  const auto argv = harness::make_launcher(
                        [] {
                          harness::host h;
                          h.address = "127.0.0.1";
                          h.launcher = harness::launcher_kind::ssh;
                          return h;
                        }(),
                        "", "/tmp/ctl")
                        ->wrap_announcing_pid({"true"});
  CHECK(argv.back().find("echo harness-remote-pid $$") != std::string::npos);
  CHECK(harness::remote_pid_of("harness-remote-pid 4242") == 4242);
  CHECK_FALSE(harness::remote_pid_of("harness-remote-pid 24x"));
  CHECK_FALSE(harness::remote_pid_of("harness-remote-pid 0"));  // kill 0 there: a whole process group
  CHECK_FALSE(harness::remote_pid_of("harness-remote-pid "));
  CHECK_FALSE(harness::remote_pid_of("{\"type\":\"armed\"}"));
}

TEST_CASE("harness process: output, stderr and exit status are captured", "[harness][process]") {
  const auto o = nb::run_blocking({"sh", "-c", "echo out; echo err >&2; exit 7"}, 5s);
  CHECK(o.exit_code == 7);
  CHECK(o.stdout_text == "out\n");
  CHECK(o.stderr_text == "err\n");
  CHECK_FALSE(o.timed_out);
}

TEST_CASE("harness process: the deadline kills a process that would run on", "[harness][process]") {
  const auto start = std::chrono::steady_clock::now();
  const auto o = nb::run_blocking({"sleep", "30"}, 300ms);
  CHECK(o.timed_out);
  CHECK(o.exit_code != 0);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("harness process: a missing program is an error naming it", "[harness][process]") {
  CHECK_THROWS_WITH(nb::run_blocking({"no-such-program-xyz"}, 1s), Catch::Contains("no-such-program-xyz"));
}

TEST_CASE("harness process: a death by signal N is status 128+N, as a shell says", "[harness][process]") {
  // Boost.Process alone says N, which cannot be told from an exit status N (netload's 4 and SIGILL).
  CHECK(nb::run_blocking({"sh", "-c", "kill -TERM $$"}, 5s).exit_code == 143);
  CHECK(nb::run_blocking({"sh", "-c", "exit 15"}, 5s).exit_code == 15);
}

TEST_CASE("harness process: input longer than a pipe's buffer reaches the child's stdin", "[harness][process]") {
  std::string input;
  for (int i = 0; input.size() < 300'000; ++i) input += std::to_string(i) + "\n";
  const auto o = nb::run_blocking({"cat"}, 10s, input);
  CHECK(o.exit_code == 0);
  CHECK(o.stdout_text == input);
  // A child that never reads it: an error for the writer, not a SIGPIPE, and no hang past the deadline.
  CHECK(nb::run_blocking({"true"}, 5s, input).exit_code == 0);
}

TEST_CASE("harness launcher: a netns host whose namespace does not exist is unreachable before anything runs",
          "[harness][launcher]") {
  const auto run_dir = std::filesystem::temp_directory_path() / fmt::format("netns-{}", ::getpid());
  std::filesystem::create_directories(run_dir);
  std::ofstream(run_dir / "there").put('\n');
  CHECK(harness::netns_exists("there", run_dir.string()));
  CHECK_FALSE(harness::netns_exists("gone", run_dir.string()));
  CHECK_FALSE(harness::netns_exists("", run_dir.string()));
  std::filesystem::remove_all(run_dir);
  harness::host h;
  h.name = "dev";
  h.address = "198.18.0.2";
  h.launcher = harness::launcher_kind::netns;
  h.netns = fmt::format("nb-no-such-ns-{}", ::getpid());
  CHECK_THAT(harness::make_launcher(h, "", "/tmp/ctl")->unreachable().value_or(""),
             Catch::Contains("network namespace '" + h.netns + "' does not exist"));
  h.launcher = harness::launcher_kind::local;
  CHECK_FALSE(harness::make_launcher(h, "", "/tmp/ctl")->unreachable());
}
