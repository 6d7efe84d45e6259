// netload --host-info's parts: the facts, the path MTU by the kernel's route, the clock service.
#include "core/base/version.hpp"
#include "core/host/host_info.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

TEST_CASE("host info: facts name the version, CPUs, kernel, every feature, and the MTU per peer") {
  const auto f = nb::host_facts({"127.0.0.1", "no-such-host.invalid"});
  CHECK(f["type"] == "host_info");
  CHECK(f["version"] == nb::version);
  CHECK(f["cpus"].get<long>() >= 1);
  CHECK(f["kernel"].get<std::string>().rfind("Linux ", 0) == 0);
  for (const char* name : {"gso", "gro", "cbpf", "meminfo"}) CHECK(f["features"][name].is_boolean());
  CHECK(f["mtu"]["127.0.0.1"]["dev"] == "lo");
  CHECK(f["mtu"]["127.0.0.1"]["mtu"].get<int>() >= 1500);
  CHECK(f["mtu"]["no-such-host.invalid"].contains("error"));
}

TEST_CASE("host info: the clock service answers each line read, then ends at end of file") {
  int in[2];
  REQUIRE(::pipe(in) == 0);
  REQUIRE(::write(in[1], "\n\nx\n", 4) == 4);  // three lines in one read
  ::close(in[1]);
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&text, &size);
  REQUIRE(out);
  CHECK(nb::serve_clock(in[0], out) == 3);
  std::fclose(out);
  ::close(in[0]);
  const std::string replies(text, size);
  std::free(text);
  const auto first = replies.substr(0, replies.find('\n'));
  CHECK(nb::parse_clock_reply(first) > 1'700'000'000'000'000'000);
  CHECK(std::count(replies.begin(), replies.end(), '\n') == 3);
}

TEST_CASE("host info: a clock reply is 'clock' and a whole number, nothing else") {
  CHECK(nb::parse_clock_reply("clock 123") == 123);
  CHECK(nb::parse_clock_reply("clock +123") == -1);
  CHECK(nb::parse_clock_reply("clock 12x") == -1);
  CHECK(nb::parse_clock_reply("harness-remote-pid 12") == -1);
}
