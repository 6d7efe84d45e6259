// netserve and netload as real processes on 127.0.0.1: counts add up, and match netserve's own log.
#include "core/base/units.hpp"
#include "core/data/tcp_send.hpp"
#include "core/sys/socket.hpp"
#include "tests/integration/netserve_fixture.hpp"
#include "tests/integration/reconciles.hpp"

#include <sys/socket.h>
#include <catch2/catch.hpp>

#include <set>
#include <thread>

using nb::test::netload_argv;
using nb::test::netserve_process;
using nb::test::require_reconciles;
using nlohmann::json;

namespace {

json run_json(std::uint16_t port, const std::string& test, double seconds, std::vector<std::string> global,
              std::vector<std::string> test_opts) {
  global.push_back("--json");
  auto c = nb::test::run(netload_argv(port, test, seconds, global, test_opts));
  INFO("stderr: " << c.err);
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  return json::parse(c.out);
}

// netserve logged one test per client on its port, with the receiver counts those clients report.
void require_logged_as_received(netserve_process& server, const json& ja, const json& jb) {
  auto logged = server.wait_logged(server.port(), 2);
  REQUIRE(logged.size() == 2);
  std::multiset<std::uint64_t> from_log(logged.begin(), logged.end());
  std::multiset<std::uint64_t> from_clients{ja["receiver"]["packets"].get<std::uint64_t>(),
                                            jb["receiver"]["packets"].get<std::uint64_t>()};
  CHECK(from_log == from_clients);
}

}  // namespace

TEST_CASE("UDP_STREAM counts reconcile and match netserve's log", "[integration][udp]") {
  netserve_process server(1);
  auto size = GENERATE(std::string("1"), std::string("16"), std::string("1400"));
  // Paced so that the 2-core CI machine stays responsive; the unpaced path is the benchmark's job.
  json r = run_json(server.port(), "UDP_STREAM", 1, {"--pps", "50000"}, {"-m", size});
  require_reconciles(r);
  CHECK(r["message_size"] == std::stoul(size));
  CHECK(r["receiver"]["packets"].get<std::uint64_t>() == server.wait_logged(server.port(), 1).at(0));
  CHECK(r["sender"]["bytes"].get<std::uint64_t>() == r["sender"]["packets"].get<std::uint64_t>() * std::stoul(size));
  if (size != "1") {
    CHECK(r["out_of_order"].is_number());
    CHECK(r["jitter_ms"].is_number());
  } else {
    CHECK(r["jitter_ms"].is_null());  // a 1-byte datagram has no room for a sequence number
  }
}

TEST_CASE("UDP_STREAM unpaced with GSO and GRO counts every datagram", "[integration][udp]") {
  netserve_process server(1);
  json r = run_json(server.port(), "UDP_STREAM", 1, {}, {"-m", "1"});
  require_reconciles(r);
  CHECK(r["sender"]["batching"] == "gso");
  CHECK(r["receiver"]["batching"] == "gro");
  CHECK(r["receiver"]["packets"].get<std::uint64_t>() == server.wait_logged(server.port(), 1).at(0));
}

TEST_CASE("UDP_STREAM without GSO falls back to sendmmsg and says so", "[integration][udp]") {
  netserve_process server(1, {"--no-gro"});
  json r = run_json(server.port(), "UDP_STREAM", 1, {"--no-gso", "--pps", "100000"}, {"-m", "64"});
  require_reconciles(r);
  CHECK(r["sender"]["batching"] == "sendmmsg");
  CHECK(r["receiver"]["batching"] == "recvmmsg");
}

TEST_CASE("TCP_STREAM delivers every byte", "[integration][tcp]") {
  netserve_process server(1);
  json r = run_json(server.port(), "TCP_STREAM", 1, {}, {"-m", "65536"});
  require_reconciles(r);
  CHECK(r["sender"]["bytes"] == r["receiver"]["bytes"]);
  CHECK(r["mss"].get<int>() > 0);
  CHECK(r["path_mtu"].get<int>() > 0);
}

TEST_CASE("TCP_STREAM honours --mss, and netperf's -M (the receiver's bytes per recv())", "[integration][tcp]") {
  netserve_process server(1);
  json r = run_json(server.port(), "TCP_STREAM", 1, {"--rate", "200M"}, {"-m", "16K", "--mss", "1200"});
  require_reconciles(r);
  CHECK(r["mss"].get<int>() <= 1200);
  // -M as netperf means it: the receiver reads 4 KiB a recv(); the MSS is the kernel's (loopback: far above 1200).
  r = run_json(server.port(), "TCP_STREAM", 0.5, {"--rate", "200M"}, {"-m", "16K", "-M", "4K"});
  require_reconciles(r);
  CHECK(r["mss"].get<int>() > 1200);
  CHECK_THAT(r["receiver"]["batching"].get<std::string>(), Catch::Contains("recv 4K"));
}

// reno: every Linux has it, and every user may choose it (net.ipv4.tcp_allowed_congestion_control).
TEST_CASE("TCP_STREAM with -K - --recv-size and --zerocopy: both ways, counts exact, the result says what ran",
          "[integration][tcp]") {
  netserve_process server(1);
  const bool reverse = GENERATE(false, true);
  std::vector<std::string> global = {"--rate", "400M"};
  std::vector<std::string> test_opts = {"-m", "128K", "-K", "reno", "--zerocopy"};
  if (reverse) {
    global.push_back("--reverse");
  } else {
    test_opts.insert(test_opts.end(), {"--recv-size", "16K"});
  }
  json r = run_json(server.port(), "TCP_STREAM", 1, global, test_opts);
  require_reconciles(r);
  CHECK(r["sender"]["bytes"] == r["receiver"]["bytes"]);
  CHECK(r["tcp"]["congestion"] == "reno");  // read back from the sending socket: -K reached it
  // Asked for, or the default for a loss-based algorithm such as reno (core/data/streams.hpp); one stream to
  // this host: the receiver copies (core/policy/receive_mode.hpp).
  CHECK(r["receiver"]["batching"] == (reverse ? "recv 256K" : "recv 16K"));
  // Loopback hands the pages to a local receiver, which cannot share them: the kernel copies every send,
  // and the result says so rather than claiming zero-copy.
  const std::string sent_by = r["sender"]["batching"];
  INFO(sent_by);
  CHECK_THAT(sent_by, Catch::StartsWith("send, zerocopy asked, the kernel copied"));
  CHECK_THAT(sent_by, !Catch::Contains("unconfirmed"));
}

TEST_CASE("TCP_STREAM sends with sendfile() unless --send-copy: both ways, counts exact, the result says which",
          "[integration][tcp]") {
  netserve_process server(1);
  const bool reverse = GENERATE(false, true);
  const bool copy = GENERATE(false, true);
  std::vector<std::string> global = {"--rate", "400M"};
  if (reverse) global.push_back("--reverse");
  // Not a whole number of pages: partial sends resume. reno: the receive size's default is 256K.
  std::vector<std::string> test_opts = {"-m", "100000", "-K", "reno"};
  if (copy) test_opts.insert(test_opts.end(), {"--send-copy", "--recv-copy"});
  else test_opts.push_back("--recv-discard");
  json r = run_json(server.port(), "TCP_STREAM", 1, global, test_opts);
  require_reconciles(r);
  CHECK(r["sender"]["bytes"] == r["receiver"]["bytes"]);
  CHECK(r["sender"]["batching"] == (copy ? "send" : "sendfile"));
  CHECK(r["receiver"]["batching"] == (copy ? "recv 256K" : "recv 256K, discarded in the kernel"));
  CHECK(r["receive"]["mode"] == (copy ? "copy" : "discard"));
  CHECK(r["receive"]["automatic"] == false);
}

// Under bbr a longer sendfile()'s corked pieces cost pacing timers (core/data/tcp_send.hpp).
TEST_CASE("TCP_STREAM under bbr asks sendfile() for one pipe-full per call: both ways, counts exact, it says so",
          "[integration][tcp]") {
  nb::fd_handle probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  try {
    if (!nb::congestion_loaded("bbr")) throw std::runtime_error(nb::congestion_unavailable("bbr"));
    nb::set_tcp_congestion(probe.get(), "bbr");
  } catch (const std::runtime_error& e) {
    WARN("skipped: " << e.what());
    return;
  }
  netserve_process server(1);
  const bool reverse = GENERATE(false, true);
  std::vector<std::string> global = {"--rate", "400M"};
  if (reverse) global.push_back("--reverse");
  json r = run_json(server.port(), "TCP_STREAM", 1, global, {"-m", "300000", "-K", "bbr"});
  require_reconciles(r);
  CHECK(r["sender"]["bytes"] == r["receiver"]["bytes"]);
  CHECK(r["tcp"]["congestion"] == "bbr");
  CHECK(r["sender"]["batching"] == "sendfile, " + nb::format_size(nb::sendfile_pipe_bytes()) + " per call");
}

// Where netload's peer is this host (here 127.0.0.1), one stream's receiver copies and several discard,
// unless told; the receiver (netserve forward, netload in reverse) reads that way, and the table and the
// JSON say which and why. The other side of the choice, a peer on another host, is the lab's
// (tests/lab/lab_tcp_info.sh) and the unit tests'.
TEST_CASE("TCP_STREAM chooses its receive mode from where the peer is, and says so", "[integration][tcp]") {
  netserve_process server(1);
  const bool reverse = GENERATE(false, true);
  const std::uint32_t streams = GENERATE(1u, 2u);
  std::vector<std::string> global = {"--rate", "400M", "--streams", std::to_string(streams)};
  if (reverse) global.push_back("--reverse");
  json r = run_json(server.port(), "TCP_STREAM", 1, global, {"-m", "64K", "-K", "reno"});
  INFO(r.dump());
  require_reconciles(r);
  const bool copies = streams == 1;
  CHECK(r["receive"]["mode"] == (copies ? "copy" : "discard"));
  CHECK(r["receive"]["automatic"] == true);
  CHECK_THAT(r["receive"]["why"].get<std::string>(), Catch::StartsWith("sender and receiver share this host"));
  CHECK(r["receiver"]["batching"] == (copies ? "recv 256K" : "recv 256K, discarded in the kernel"));
  CHECK(r["options"]["recv_mode"] == "auto");

  // The table says it too, beside the rates.
  auto c = nb::test::run(
      netload_argv(server.port(), "TCP_STREAM", 1, global, {"-m", "64K", "-K", "reno", "--recv-mode", "auto"}));
  INFO(c.out);
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  CHECK_THAT(c.out, Catch::Contains(copies ? "\nReceive     copy (automatic: sender and receiver share this host"
                                           : "\nReceive     discard (automatic: sender and receiver share this host"));
}

TEST_CASE("TCP_STREAM -K with an algorithm the host lacks is one clear line", "[integration][tcp][errors]") {
  netserve_process server(1);
  auto c = nb::test::run(netload_argv(server.port(), "TCP_STREAM", 1, {}, {"-K", "nosuchcc"}));
  CHECK(c.status == 1);
  CHECK_THAT(c.err, Catch::Contains("congestion control 'nosuchcc' is not available on this host (it has: "));
  c = nb::test::run(netload_argv(server.port(), "TCP_STREAM", 1, {"--reverse"}, {"-K", "nosuchcc"}));
  CHECK(c.status == 1);
  CHECK_THAT(c.err, Catch::Contains("rejected: congestion control 'nosuchcc' is not available"));
}

TEST_CASE("reverse mode: the server sends - counts still add up", "[integration][reverse]") {
  netserve_process server(1);
  SECTION("UDP") {
    json r = run_json(server.port(), "UDP_STREAM", 1, {"--reverse", "--pps", "50000"}, {"-m", "100"});
    require_reconciles(r);
    CHECK(r["reverse"] == true);
  }
  SECTION("TCP") {
    json r = run_json(server.port(), "TCP_STREAM", 1, {"--reverse"}, {"-m", "32K"});
    require_reconciles(r);
  }
}

namespace {

// The sending side's TCP_INFO (netload's forward, netserve's in reverse): each stream's at each interval
// and at its end, in the JSON.
void require_tcp_samples(const json& r, std::size_t streams) {
  INFO(r.dump());
  REQUIRE(r["tcp"].is_object());
  CHECK(r["tcp"]["congestion"].is_string());
  REQUIRE(r["tcp"]["streams"].size() == streams);
  for (const auto& s : r["tcp"]["streams"]) {
    CHECK(s["rtt_us"].get<std::uint64_t>() > 0);
    CHECK(s["snd_mss"].get<std::uint64_t>() > 0);
    CHECK(s["pmtu"].get<std::uint64_t>() >= s["snd_mss"].get<std::uint64_t>());
    CHECK(s["cwnd_bytes"].get<std::uint64_t>() >= s["snd_mss"].get<std::uint64_t>());
    CHECK(s["retransmits"].is_number_unsigned());
    CHECK(s["bytes_sent"].get<std::uint64_t>() >= r["sender"]["bytes"].get<std::uint64_t>() / streams / 2);
  }
  CHECK(r["tcp"]["retransmits"].is_number_unsigned());
  REQUIRE(r["intervals"].size() >= 3);
  for (const auto& i : r["intervals"]) {
    REQUIRE(i["tcp"].is_object());
    CHECK(i["tcp"]["streams"].size() == streams);
    CHECK(i["tcp"]["rtt_us"].get<double>() > 0);
  }
}

}  // namespace

TEST_CASE("TCP_STREAM reports its senders' TCP_INFO per interval and at the end - forward and reverse",
          "[integration][tcp]") {
  netserve_process server(1);
  SECTION("forward: netload sends") {
    json r = run_json(server.port(), "TCP_STREAM", 1, {"--interval", "0.25", "--streams", "2", "--rate", "400M"},
                      {"-m", "64K"});
    require_reconciles(r);
    require_tcp_samples(r, 2);
  }
  SECTION("reverse: netserve sends") {
    json r = run_json(server.port(), "TCP_STREAM", 1,
                      {"--interval", "0.25", "--streams", "2", "--rate", "400M", "--reverse"}, {"-m", "64K"});
    require_reconciles(r);
    require_tcp_samples(r, 2);
  }
  SECTION("UDP has none") {
    json r = run_json(server.port(), "UDP_STREAM", 0.5, {"--interval", "0.25", "--pps", "1000"}, {"-m", "100"});
    CHECK_FALSE(r.contains("tcp"));
    CHECK_FALSE(r["intervals"][0].contains("tcp"));
  }
}

TEST_CASE("eight concurrent instances on eight ports each get their own counts", "[integration][multi]") {
  netserve_process server(8);
  std::vector<std::unique_ptr<nb::test::child>> clients;
  for (int i = 0; i < 8; ++i) {
    // Different rates, so a mix-up between ports would show.
    auto pps = std::to_string(5000 * (i + 1));
    clients.push_back(std::make_unique<nb::test::child>(
        netload_argv(server.port(i), "UDP_STREAM", 1, {"--json", "--pps", pps}, {"-m", "16"})));
  }
  for (int i = 0; i < 8; ++i) {
    auto c = clients[i]->wait();
    INFO("instance " << i << " stderr: " << c.err);
    REQUIRE(nb::test::ran_and_reconciled(c.status));
    json r = json::parse(c.out);
    require_reconciles(r);
    CHECK(r["port"] == server.port(i));
    auto logged = server.wait_logged(server.port(i), 1);
    REQUIRE(logged.size() == 1);
    CHECK(r["receiver"]["packets"].get<std::uint64_t>() == logged[0]);
    double expected = 5000.0 * (i + 1);
    CHECK(r["sender"]["pps"].get<double>() ==
          Approx(expected).epsilon(0.25));  // sanity only: pacing accuracy is the benchmark's job
  }
}

TEST_CASE("two clients on one port are counted apart", "[integration][multi]") {
  netserve_process server(1);
  nb::test::child a(netload_argv(server.port(), "UDP_STREAM", 1, {"--json", "--pps", "10000"}, {"-m", "1"}));
  nb::test::child b(netload_argv(server.port(), "UDP_STREAM", 1, {"--json", "--pps", "40000"}, {"-m", "1"}));
  auto ra = a.wait(), rb = b.wait();
  REQUIRE(nb::test::ran_and_reconciled(ra.status));
  REQUIRE(nb::test::ran_and_reconciled(rb.status));
  json ja = json::parse(ra.out), jb = json::parse(rb.out);
  require_reconciles(ja);
  require_reconciles(jb);
  CHECK(ja["sender"]["pps"].get<double>() == Approx(10000).epsilon(0.25));
  CHECK(jb["sender"]["pps"].get<double>() == Approx(40000).epsilon(0.25));
  require_logged_as_received(server, ja, jb);
}

TEST_CASE("two clients on two CPUs into one port are received on two lanes and counted exactly",
          "[integration][multi]") {
  auto cpus = nb::allowed_cpus();
  if (cpus.size() < 2) {
    WARN("skipped: this process may run on one CPU only, lanes need two");
    return;
  }
  netserve_process server(1, {"--rx-threads", "2"});
  // Each client pinned to its own CPU: on loopback the softirq runs there, so the kernel steers its
  // datagrams to that CPU's lane only.
  auto client = [&](int cpu) {
    return std::make_unique<nb::test::child>(netload_argv(
        server.port(), "UDP_STREAM", 1, {"--json", "-T", std::to_string(cpu), "--pps", "100000"}, {"-m", "1400"}));
  };
  auto a = client(cpus[0]), b = client(cpus[1]);
  auto ra = a->wait(), rb = b->wait();
  INFO("a: " << ra.err << " b: " << rb.err);
  REQUIRE(nb::test::ran_and_reconciled(ra.status));
  REQUIRE(nb::test::ran_and_reconciled(rb.status));
  json ja = json::parse(ra.out), jb = json::parse(rb.out);
  require_reconciles(ja);
  require_reconciles(jb);
  CHECK(ja["loss"]["path"] == 0);  // loopback loses nothing on the way: any loss is the receiver's
  CHECK(jb["loss"]["path"] == 0);
  require_logged_as_received(server, ja, jb);
  INFO(server.log());
  CHECK(server.log().find(" lanes=0\n") != std::string::npos);
  CHECK(server.log().find(" lanes=1\n") != std::string::npos);
}

TEST_CASE("reverse UDP answers from the address the client used - also on a wildcard-bound server",
          "[integration][reverse]") {
  // netserve on 0.0.0.0, the client talks to 127.0.0.5: the kernel's own choice of source for the reply
  // would be 127.0.0.1, which the client's connected socket would silently discard.
  nb::test::child server({nb::test::netserve_path(), "-p", "0", "--bind", "0.0.0.0"});
  auto ready = json::parse(server.read_line());
  auto port = ready["ports"][0].get<std::uint16_t>();
  auto c = nb::test::run({nb::test::netload_path(), "-H", "127.0.0.5", "-p", std::to_string(port), "-t", "UDP_STREAM",
                          "-l", "1", "--reverse", "--pps", "20000", "--dscp", "46", "--json", "--", "-m", "100"});
  INFO(c.err);
  REQUIRE(nb::test::ran_and_reconciled(c.status));
  json r = json::parse(c.out);
  require_reconciles(r);
  CHECK(r["loss"]["packets"] == 0);
  server.stop();
}
