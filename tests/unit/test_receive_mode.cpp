// The TCP receive mode: the choice from where the peer is, how the result carries it, and what the
// tables print beside the figures (the receive mode for TCP, an overdriven receiver's figure for UDP).
#include "core/host/host_info.hpp"
#include "core/policy/receive_mode.hpp"
#include "core/policy/verdict.hpp"
#include "netload/native/client.hpp"
#include "netload/native/report.hpp"

#include <catch2/catch.hpp>

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace nb;

TEST_CASE("receive mode: automatic copies for one stream to this host, discards otherwise, and asked is kept",
          "[receive]") {
  auto one_here = choose_receive(recv_mode::automatic, {true, 1});
  CHECK(one_here.mode == "copy");
  CHECK(one_here.automatic);
  CHECK(
      receive_words(one_here) ==
      "copy (automatic: sender and receiver share this host: the copy moves TCP's receive work to the receiver's CPU)");
  auto five_here = choose_receive(recv_mode::automatic, {true, 5});
  CHECK(five_here.mode == "discard");
  CHECK_THAT(receive_words(five_here),
             Catch::StartsWith("discard (automatic: sender and receiver share this host, but 5 "
                               "streams' receivers already take TCP's receive work"));
  for (std::uint32_t streams : {1u, 5u}) {
    auto away = choose_receive(recv_mode::automatic, {false, streams});
    CHECK(away.mode == "discard");
    CHECK(receive_words(away) == "discard (automatic: the receiver is on another host: the kernel discards, no copy)");
  }
  for (bool here : {false, true}) {
    CHECK(choose_receive(recv_mode::copy, {here, 5}).mode == "copy");
    CHECK(choose_receive(recv_mode::discard, {here, 1}).mode == "discard");
    CHECK_FALSE(choose_receive(recv_mode::discard, {here, 1}).automatic);
  }
  CHECK(receive_words(choose_receive(recv_mode::discard, {true, 1})) == "discard (as asked)");
  CHECK(parse_recv_mode("auto") == recv_mode::automatic);
  CHECK(parse_recv_mode("copy") == recv_mode::copy);
  CHECK(parse_recv_mode("discard") == recv_mode::discard);
  CHECK_FALSE(parse_recv_mode("Copy"));
}

TEST_CASE("receive mode: this host's addresses are loopback and its interfaces' (nothing is sent)", "[receive]") {
  CHECK(held_by_this_host(endpoint::from_numeric("127.0.0.1", 9)));
  CHECK(held_by_this_host(endpoint::from_numeric("127.3.2.1", 9)));
  CHECK(held_by_this_host(endpoint::from_numeric("::1", 9)));
  CHECK(held_by_this_host(endpoint::from_numeric("::ffff:127.0.0.1", 9)));
  CHECK_FALSE(held_by_this_host(endpoint::from_numeric("192.0.2.77", 9)));  // TEST-NET-1: nobody's
  CHECK_FALSE(held_by_this_host(endpoint::from_numeric("2001:db8::77", 9)));
  // Every address an interface holds counts, not only loopback.
  ifaddrs* list = nullptr;
  REQUIRE(::getifaddrs(&list) == 0);
  for (ifaddrs* a = list; a; a = a->ifa_next)
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET) {
      const endpoint held(a->ifa_addr, sizeof(sockaddr_in));
      INFO(a->ifa_name << " " << held.address());
      CHECK(held_by_this_host(held));
    }
  ::freeifaddrs(list);
}

TEST_CASE("receive mode: netload resolves it from the control connection's peer", "[receive]") {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  const endpoint any = endpoint::from_numeric("127.0.0.1", 0);
  REQUIRE(::bind(listener, any.data(), any.size()) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  const endpoint at = endpoint::local_of(listener);
  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(::connect(client, at.data(), at.size()) == 0);
  load::client_options o;
  o.streams = 1;
  auto f = load::resolve_receive(o, client);
  CHECK(f.mode == "copy");
  CHECK(o.recv_copy);
  o.streams = 3;
  CHECK(load::resolve_receive(o, client).mode == "discard");
  CHECK_FALSE(o.recv_copy);
  o.receive = recv_mode::copy;
  CHECK(load::resolve_receive(o, client).mode == "copy");
  CHECK(o.recv_copy);
  ::close(client);
  ::close(listener);
}

namespace {

test_result tcp_result(const receive_figures& f) {
  test_result r;
  r.ok = true;
  r.kind = test_kind::tcp_stream;
  r.message_size = 1 << 20;
  r.sender.bytes = r.receiver.bytes = 10u << 20;
  r.sender.seconds = r.receiver.seconds = 1;
  reconcile(r, 0, 0);
  compute_rates(r.sender);
  compute_rates(r.receiver);
  r.receive = f;
  return r;
}

// 1000 sent, 600 received in 1 s, 400 dropped by the socket with the receiver's CPU in softirq.
test_result overdriven_udp() {
  test_result r;
  r.ok = true;
  r.message_size = 1;
  r.sender.packets = 1000;
  r.receiver.packets = 600;
  r.sender.seconds = r.receiver.seconds = 1;
  reconcile(r, 400, 600);
  compute_rates(r.sender);
  compute_rates(r.receiver);
  r.verdict = limit_verdict{"receiver-cpu", "receiver CPU-bound (CPU 0 99 % busy, softirq 93 %: receive livelock)"};
  r.receiver_note = figure_meaning(r);
  return r;
}

// The line after the one starting with `label`.
std::string line_after(const std::string& text, const std::string& label) {
  const auto at = text.find("\n" + label);
  if (at == std::string::npos) return {};
  const auto from = text.find('\n', at + 1) + 1;
  return text.substr(from, text.find('\n', from) - from);
}

}  // namespace

TEST_CASE("receive mode and an overdriven receiver's meaning: in the JSON, read back, and beside the figures",
          "[receive]") {
  const auto tcp = tcp_result(choose_receive(recv_mode::automatic, {true, 1}));
  auto j = to_json(tcp);
  CHECK(j["receive"]["mode"] == "copy");
  CHECK(j["receive"]["automatic"] == true);
  CHECK(j["receiver_note"].is_null());
  auto back = result_from_json(j);
  REQUIRE(back.receive);
  CHECK(back.receive->why == tcp.receive->why);
  CHECK(to_json(back) == j);
  CHECK(line_after(load::format_table(tcp), "Messages/s") ==
        "Receive     copy (automatic: sender and receiver share this host: the copy moves TCP's receive work to the "
        "receiver's CPU)");

  const auto udp = overdriven_udp();
  REQUIRE(udp.receiver_note);
  j = to_json(udp);
  CHECK(j["receiver_note"] == *udp.receiver_note);
  CHECK(j["receive"].is_null());
  CHECK(result_from_json(j).receiver_note == udp.receiver_note);
  const std::string table = load::format_table(udp);
  INFO(table);
  CHECK(line_after(table, "Packets/s") == "Meaning     " + *udp.receiver_note);
  CHECK_THAT(table, Catch::Contains("Meaning     received 600.0 pps is what this receiver kept while overdriven"));

  j.erase("receiver_note");  // results written before either existed
  j.erase("receive");
  back = result_from_json(j);
  CHECK_FALSE(back.receiver_note);
  CHECK_FALSE(back.receive);
}
