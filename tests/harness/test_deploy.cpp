// harness deploy, its pure parts: the SHA-256 against known digests, where the programs to copy are
// found, and the commands a dry run prints (every path quoted, so that it survives the two shells: ours
// and the one sshd starts there).
#include "harness/launch/deploy.hpp"
#include "harness/process/process.hpp"
#include "tests/support/temp_file.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <stdlib.h>

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using nb::test::temp_dir;

namespace {

const std::string two_ssh_hosts = R"(name = "deploy"
[defaults]
ports = [0, 0]
[hosts]
a = { address = "127.0.0.1", launcher = "ssh", bin_dir = "/opt/it's here" }
b = { address = "127.0.0.2", launcher = "ssh", user = "root", bin_dir = "/opt/nb" }
c = { address = "127.0.0.3" }
unused = { address = "127.0.0.4", launcher = "ssh", bin_dir = "/opt/x" }
[[tests]]
name = "t"
message_size = 100
topology = "fan-in"
server = "a"
clients = ["b", "c"]
)";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The words a POSIX shell makes of `command`.
std::vector<std::string> words_of(const std::string& command) {
  const auto o = nb::run_blocking({"sh", "-c", "printf '%s\\0' " + command}, 5s);
  REQUIRE(o.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream in(o.stdout_text);
  for (std::string w; std::getline(in, w, '\0');) out.push_back(w);
  return out;
}

// A file of one byte at `rel` beneath `dir`, its folders made.
void touch(const fs::path& dir, const fs::path& rel) {
  fs::create_directories((dir / rel).parent_path());
  std::ofstream(dir / rel) << "x";
}

}  // namespace

TEST_CASE("harness deploy: SHA-256 of known strings", "[harness][deploy]") {
  CHECK(harness::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(harness::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(harness::sha256_hex(std::string("a\0b", 3)) != harness::sha256_hex("a"));  // bytes, not a C string
}

TEST_CASE("harness deploy: the dry run lists every command of each ssh host, quoted", "[harness][deploy]") {
  const auto p = harness::parse_plan(two_ssh_hosts, "deploy.toml");
  std::vector<std::string> errors;
  const std::string text = harness::deploy_dry_run(p, "/src/bin", errors);
  CHECK(errors.empty());
  CHECK(harness::hosts_to_deploy(p) == std::vector<std::string>{"a", "b", "c"});
  CHECK(text.find("## host c (127.0.0.3): local: nothing to copy") != std::string::npos);
  CHECK(text.find("unused") == std::string::npos);  // no test of the plan uses it
  CHECK(text.find("  version: /src/bin/netload --version\n") != std::string::npos);
  const auto lines = lines_of(text);
  for (const std::string host : {"## host a (127.0.0.1): to /opt/it's here", "## host b (127.0.0.2): to /opt/nb"}) {
    const auto at = std::find(lines.begin(), lines.end(), host);
    REQUIRE(at != lines.end());
    // connect, list, a copy per program, verify, install, version, close
    const auto end = std::find(at + 1, lines.end(), "");
    CHECK(std::count_if(at + 1, end, [](const std::string& l) { return l.rfind("  #", 0) != 0; }) == 8);
    CHECK(std::count_if(at + 1, end,
                        [](const std::string& l) { return l.find(" < /src/bin/net") != std::string::npos; }) == 2);
  }
  // What sshd's shell gets of the copy command: the staged path is one word, whatever it holds.
  const auto copy = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind("  copy:", 0) == 0 && l.find("127.0.0.1") != std::string::npos;
  });
  REQUIRE(copy != lines.end());
  const std::string command = copy->substr(copy->find("ssh ") + 4, copy->rfind(" < ") - copy->find("ssh ") - 4);
  const auto ssh_words = words_of(command);
  REQUIRE(ssh_words.size() > 2);
  CHECK(ssh_words[ssh_words.size() - 2] == "127.0.0.1");
  CHECK(std::find(ssh_words.begin(), ssh_words.end(), "-n") == ssh_words.end());  // its stdin is the file
  const auto remote = words_of(ssh_words.back());
  REQUIRE(remote.size() == 6);
  CHECK(remote[0] == "sh");
  CHECK(remote[4] == "/opt/it's here");
  CHECK(remote[5] == "/opt/it's here/.netload.new");
}

TEST_CASE("harness deploy: an ssh host without bin_dir is an error naming it", "[harness][deploy]") {
  std::string text = two_ssh_hosts;
  text.replace(text.find(", bin_dir = \"/opt/nb\""), std::string(", bin_dir = \"/opt/nb\"").size(), "");
  std::vector<std::string> errors;
  const std::string out = harness::deploy_dry_run(harness::parse_plan(text, "deploy.toml"), "/src/bin", errors);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("host b (127.0.0.2)") != std::string::npos);
  CHECK(errors[0].find("bin_dir") != std::string::npos);
  CHECK(out.find("## host a (127.0.0.1)") != std::string::npos);  // the others still there
}

TEST_CASE("harness deploy: the programs come from --from or the tree's static build", "[harness][deploy]") {
  temp_dir t;
  // --from: side by side, or the build tree's DIR/netload/netload
  touch(t.path, "flat/netload");
  touch(t.path, "flat/netserve");
  touch(t.path, "tree/netload/netload");
  touch(t.path, "tree/netserve/netserve");
  CHECK(harness::find_deploy_source("/proc/self/exe", (t.path / "flat").string()) == (t.path / "flat").string());
  CHECK(harness::local_program((t.path / "tree").string(), "netload") == (t.path / "tree/netload/netload").string());
  CHECK(harness::find_deploy_source("", (t.path / "tree").string()) == (t.path / "tree").string());
  touch(t.path, "half/netload");
  CHECK_THROWS_WITH(harness::find_deploy_source("", (t.path / "half").string()), Catch::Contains("not both there"));
  // No --from: build/<preset>/harness/harness finds build/static/bin, else says how to build it.
  touch(t.path, "build/default/harness/harness");
  const std::string self = (t.path / "build/default/harness/harness").string();
  CHECK_THROWS_WITH(harness::find_deploy_source(self, ""),
                    Catch::Contains("cmake --preset static && cmake --build --preset static"));
  touch(t.path, "build/static/bin/netload");
  touch(t.path, "build/static/bin/netserve");
  CHECK(harness::find_deploy_source(self, "") == (t.path / "build/static/bin").string());
}
