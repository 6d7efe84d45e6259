// netserve with a key: clients that hold it run UDP and TCP tests as usual; clients without it, with a
// wrong one, or with one for a server that has none, get one clear line and a non-zero status, and the
// server goes on serving.
#include "core/wire/native/protocol.hpp"
#include "tests/integration/netserve_fixture.hpp"
#include "tests/integration/raw_client.hpp"
#include "tests/support/temp_file.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

using nb::test::netload_argv;
using nb::test::netserve_process;
using nlohmann::json;

namespace {

// A key file as a user would write it: the key and a line end, mode 600.
struct key_file : nb::test::temp_file {
  explicit key_file(const std::string& key) : temp_file(key + "\n", 0600) {}
};

nb::test::completed run_with(std::uint16_t port, const std::string& test, std::vector<std::string> global) {
  global.insert(global.end(), {"--json", "--pps", "20000", "--connect-timeout", "2"});
  return nb::test::run(netload_argv(port, test, 1, global, {"-m", "1400"}));
}

}  // namespace

TEST_CASE("a keyed netserve serves clients that hold the key - UDP and TCP", "[integration][auth]") {
  key_file key("correct horse battery staple");
  netserve_process server(1, {"--psk-file", key.path});
  for (std::string test : {"UDP_STREAM", "TCP_STREAM"}) {
    auto c = run_with(server.port(), test, {"--psk-file", key.path, "--streams", "2"});
    INFO(test << ": " << c.err);
    REQUIRE(nb::test::ran_and_reconciled(c.status));
    json r = json::parse(c.out);
    CHECK(r["ok"] == true);
    CHECK(r["loss"]["reconciles"] == true);
    CHECK(r["receiver"]["bytes"].get<std::uint64_t>() > 0);
  }
}

TEST_CASE("a keyed netserve refuses clients without the key and goes on serving", "[integration][auth]") {
  key_file key("correct horse battery staple"), other("Tr0ub4dor&3");
  netserve_process server(1, {"--psk-file", key.path});

  auto none = run_with(server.port(), "UDP_STREAM", {});
  CHECK(none.status == 1);
  CHECK_THAT(none.err, Catch::Contains("the server requires a key: give netload --psk-file"));

  auto wrong = run_with(server.port(), "UDP_STREAM", {"--psk-file", other.path});
  CHECK(wrong.status == 1);
  CHECK_THAT(wrong.err, Catch::Contains("wrong key"));

  auto ok = run_with(server.port(), "UDP_STREAM", {"--psk-file", key.path});
  CHECK(nb::test::ran_and_reconciled(ok.status));
  for (int i = 0; i < 300 && server.log().find("wrong key") == std::string::npos; ++i) ::usleep(10'000);
  CHECK_THAT(server.log(), Catch::Contains("'test_request' before authenticating"));
  CHECK_THAT(server.log(), Catch::Contains("wrong key"));
}

TEST_CASE("a key for a netserve without one is an error that says so - whichever side gives up first",
          "[integration][auth]") {
  key_file key("correct horse battery staple");
  // Both wait for the other to speak: netload's timer (2 s) ends it, or netserve's (1 s) does.
  for (std::string server_timeout : {"10", "1"}) {
    netserve_process server(1, {"--first-message-timeout", server_timeout});
    auto c = run_with(server.port(), "UDP_STREAM", {"--psk-file", key.path});
    INFO("netserve --first-message-timeout " << server_timeout << ": " << c.err);
    CHECK(c.status == 1);
    CHECK_THAT(c.err, Catch::Contains("the server sent no authentication challenge"));
  }
}

TEST_CASE("a keyed netserve gates data connections too", "[integration][auth]") {
  // A TCP data connection that skips the challenge is refused before its cookie is even looked at.
  key_file key("correct horse battery staple");
  netserve_process server(1, {"--psk-file", key.path});
  const nb::message hello = nb::data_hello{std::string(32, '0'), 0, ""};
  nb::test::send_and_expect_close(server.port(), nb::encode_frame(hello), false);
  for (int i = 0; i < 300 && server.log().find("'data' before authenticating") == std::string::npos; ++i)
    ::usleep(10'000);
  CHECK_THAT(server.log(), Catch::Contains("'data' before authenticating"));
}

TEST_CASE("key files others may read are refused at start", "[integration][auth]") {
  key_file key("correct horse battery staple");
  ::chmod(key.path.c_str(), 0644);
  auto s = nb::test::run({nb::test::netserve_path(), "--bind", "127.0.0.1", "-p", "0", "--psk-file", key.path});
  CHECK(s.status == 1);
  CHECK_THAT(s.err, Catch::Contains("chmod o= it"));
  auto c = nb::test::run(netload_argv(9, "UDP_STREAM", 1, {"--psk-file", key.path}, {"-m", "1"}));
  CHECK(c.status == 1);
  CHECK_THAT(c.err, Catch::Contains("chmod o= it"));
}
