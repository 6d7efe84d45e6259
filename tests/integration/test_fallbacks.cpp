// Every kernel fallback (core/sys/kernel_features.hpp), forced with NETBENCH_DISABLE on real netserve and
// netload on 127.0.0.1: the program says so on stderr, the result's batching names the path that ran,
// and the counts still reconcile.
#include "core/sys/socket.hpp"
#include "tests/integration/netserve_fixture.hpp"
#include "tests/integration/reconciles.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

using nb::test::netload_argv;
using nb::test::netserve_process;
using nb::test::require_reconciles;
using nlohmann::json;

namespace {

// NETBENCH_DISABLE=value in the environment of the programs started while it lives (a child takes this
// process's environment when it starts).
class disabled {
 public:
  explicit disabled(const char* value) {
    if (const char* old = std::getenv("NETBENCH_DISABLE")) old_ = old;
    ::setenv("NETBENCH_DISABLE", value, 1);
  }
  ~disabled() {
    if (old_) ::setenv("NETBENCH_DISABLE", old_->c_str(), 1);
    else ::unsetenv("NETBENCH_DISABLE");
  }
  disabled(const disabled&) = delete;
  disabled& operator=(const disabled&) = delete;

 private:
  std::optional<std::string> old_;
};

// A paced UDP test of 1 s, with NETBENCH_DISABLE=`off` for netload when not empty; its JSON result, and
// its stderr in `err`.
json run_udp(std::uint16_t port, const char* off, std::vector<std::string> global, std::string& err) {
  global.insert(global.end(), {"--json", "--pps", "50000"});
  std::optional<disabled> scope;
  if (*off) scope.emplace(off);
  auto c = nb::test::run(netload_argv(port, "UDP_STREAM", 1, global, {"-m", "64"}));
  scope.reset();
  INFO("stderr: " << c.err);
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  err = c.err;
  json r = json::parse(c.out);
  // 50 kpps of 64 bytes on loopback loses nothing: counts that reconcile are not enough, a fallback that
  // sent each GSO buffer as one datagram would reconcile too, with ~98 % "lost".
  CHECK(r["loss"]["percent"].get<double>() < 5.0);
  return r;
}

// netserve with NETBENCH_DISABLE=`off`, on one port.
std::unique_ptr<netserve_process> serve(const char* off, std::vector<std::string> extra = {}) {
  disabled scope(off);
  return std::make_unique<netserve_process>(1, std::move(extra));
}

bool says(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// What the ready line says of `feature`'s probe; nullopt when it says nothing.
std::optional<bool> ready_kernel(netserve_process& server, const char* feature) {
  const json& ready = server.ready();
  if (!ready.contains("kernel") || !ready["kernel"].contains(feature)) return std::nullopt;
  return ready["kernel"][feature].get<bool>();
}

}  // namespace

TEST_CASE("without UDP GSO the sender uses sendmmsg, says so, and counts reconcile", "[integration][udp][fallback]") {
  std::string err;
  SECTION("netload sends") {
    auto server = serve("");
    json r = run_udp(server->port(), "gso", {}, err);
    require_reconciles(r);
    CHECK(r["sender"]["batching"] == "sendmmsg");
    CHECK(says(err, "netload: no UDP GSO (UDP_SEGMENT, Linux 4.18) (disabled by NETBENCH_DISABLE)"));
  }
  SECTION("netserve sends (reverse)") {
    auto server = serve("gso");
    json r = run_udp(server->port(), "", {"--reverse"}, err);
    require_reconciles(r);
    CHECK(r["sender"]["batching"] == "sendmmsg");
    CHECK(ready_kernel(*server, "gso") == false);
    CHECK(says(server->log(), "netserve: no UDP GSO"));
  }
}

TEST_CASE("without UDP GRO the receiver uses recvmmsg, says so, and counts reconcile", "[integration][udp][fallback]") {
  std::string err;
  SECTION("netserve receives") {
    auto server = serve("gro", {"--rx-threads", "1"});
    json r = run_udp(server->port(), "", {}, err);
    require_reconciles(r);
    CHECK(r["receiver"]["batching"] == "recvmmsg");
    CHECK(ready_kernel(*server, "gro") == false);
  }
  SECTION("netload receives (reverse)") {
    auto server = serve("");
    json r = run_udp(server->port(), "gro", {"--reverse"}, err);
    require_reconciles(r);
    CHECK(r["receiver"]["batching"] == "recvmmsg");
    CHECK(says(err, "netload: no UDP GRO (Linux 5.0)"));
  }
}

TEST_CASE("without reuseport BPF netserve's lanes share the port by hash, and counts reconcile",
          "[integration][udp][fallback]") {
  if (nb::allowed_cpus().size() < 2) {
    WARN("skipped: this process may run on one CPU only, lanes need two");
    return;
  }
  // Before, netserve could not bind a single port with two lanes on such a kernel (found in review).
  auto server = serve("cbpf", {"--rx-threads", "2"});
  CHECK(ready_kernel(*server, "cbpf") == false);
  CHECK(says(server->log(), "netserve: no reuseport BPF steering"));
  auto client = [&] {
    return std::make_unique<nb::test::child>(
        netload_argv(server->port(), "UDP_STREAM", 1, {"--json", "--pps", "50000"}, {"-m", "1400"}));
  };
  auto a = client(), b = client();
  auto ra = a->wait(), rb = b->wait();
  INFO("a: " << ra.err << " b: " << rb.err);
  REQUIRE(nb::test::ran_and_reconciled(ra.status));
  REQUIRE(nb::test::ran_and_reconciled(rb.status));
  for (const auto* c : {&ra, &rb}) {
    json r = json::parse(c->out);
    require_reconciles(r);
    CHECK(r["receiver"]["batching"] == "gro, lanes by kernel hash");
  }
  auto logged = server->wait_logged(server->port(), 2);
  CHECK(logged.size() == 2);
}

TEST_CASE("without SO_MEMINFO the result says the receiver's drops are unknown, and counts reconcile",
          "[integration][udp][fallback]") {
  std::string err;
  json r;
  SECTION("netserve receives") {
    auto server = serve("meminfo", {"--rx-threads", "1"});
    r = run_udp(server->port(), "", {}, err);
    CHECK(ready_kernel(*server, "meminfo") == false);
  }
  SECTION("netload receives (reverse)") {
    auto server = serve("");
    r = run_udp(server->port(), "meminfo", {"--reverse"}, err);
    CHECK(says(err, "netload: no SO_MEMINFO (Linux 4.12)"));
  }
  require_reconciles(r);
  CHECK(r["receiver"]["batching"] == "gro, no drop count");
  CHECK(r["loss"]["receiver_kernel_drops"] == 0);
  CHECK(says(r["loss"]["note"].get<std::string>(), "receiver kernel drops unknown"));
}

TEST_CASE("without SO_MEMINFO an overflowing socket is still named by the verdict, never taken for the path",
          "[integration][udp][fallback]") {
  // A 4 KiB receive buffer and an unpaced sender: the socket overflows. Its own count is unknown here; the
  // receiving host's RcvbufErrors, which -C samples, must decide.
  auto server = serve("meminfo", {"--rx-threads", "1", "--rcvbuf", "4096"});
  auto c = nb::test::run(netload_argv(server->port(), "UDP_STREAM", 1, {"--json", "-C"}, {"-m", "1400"}));
  INFO("stderr: " << c.err);
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  json r = json::parse(c.out);
  require_reconciles(r);
  CHECK(r["receiver"]["batching"].get<std::string>().find("no drop count") != std::string::npos);
  REQUIRE(r["loss"]["packets"].get<std::uint64_t>() > 0);
  CHECK(r["verdict"]["limit"] != "path");
  CHECK(says(r["verdict"]["text"].get<std::string>(), "RcvbufErrors"));
}

TEST_CASE("with every feature disabled on both sides a test still runs and reconciles",
          "[integration][udp][fallback]") {
  const bool two = nb::allowed_cpus().size() >= 2;
  auto server = serve("gso,gro,cbpf,meminfo", {"--rx-threads", two ? "2" : "1"});
  std::string err;
  SECTION("forward") {
    json r = run_udp(server->port(), "gso,gro,meminfo", {}, err);
    require_reconciles(r);
    CHECK(r["sender"]["batching"] == "sendmmsg");
    CHECK(r["receiver"]["batching"] ==
          (two ? "recvmmsg, lanes by kernel hash, no drop count" : "recvmmsg, no drop count"));
  }
  SECTION("reverse") {
    json r = run_udp(server->port(), "gso,gro,meminfo", {"--reverse"}, err);
    require_reconciles(r);
    CHECK(r["sender"]["batching"] == "sendmmsg");
    CHECK(r["receiver"]["batching"] == "recvmmsg, no drop count");
  }
}

TEST_CASE("NETBENCH_DISABLE naming no feature is refused by both programs", "[integration][fallback]") {
  disabled scope("gso,bogus");
  auto load = nb::test::run(netload_argv(1, "UDP_STREAM", 1, {}, {"-m", "64"}), std::chrono::seconds(10));
  CHECK(load.status == 1);
  CHECK(says(load.err, "netload: NETBENCH_DISABLE: 'bogus' names no kernel feature"));
  auto served = nb::test::run({nb::test::netserve_path(), "--bind", "127.0.0.1", "-p", "0"}, std::chrono::seconds(10));
  CHECK(served.status == 1);
  CHECK(says(served.err, "netserve: NETBENCH_DISABLE: 'bogus' names no kernel feature"));
}
