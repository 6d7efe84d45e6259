// netserve's budget: what a test costs, one client's share, the whole process's limit, and giving back.
#include "netserve/server/server_budget.hpp"

#include <catch2/catch.hpp>

using nb::serve::budget;
using nb::serve::budget_cost;
using nb::serve::budget_limits;
using nb::serve::cost_of;
using nb::serve::per_client_count;

TEST_CASE("a test costs its streams and their buffers, forward UDP only the test", "[unit][budget]") {
  nb::test_request r;
  r.kind = nb::test_kind::udp_stream;
  r.streams = 8;
  r.message_size = 1400;
  auto c = cost_of(r);
  CHECK((c.tests == 1 && c.streams == 0 && c.buffer_bytes == 0));
  r.kind = nb::test_kind::tcp_stream;
  c = cost_of(r);
  CHECK((c.streams == 8 && c.buffer_bytes == 8u * (256u << 10)));  // forward TCP: the largest default read each
  r.recv_size = 1u << 20;
  CHECK(cost_of(r).buffer_bytes == 8u << 20);  // or the receive size the client asked for
  r.reverse = true;
  r.message_size = 16u << 20;
  CHECK(cost_of(r).buffer_bytes == std::uint64_t{8} << 24);  // reverse TCP: one message each
  r.kind = nb::test_kind::udp_stream;
  r.message_size = 65507;
  CHECK(cost_of(r).buffer_bytes >= std::uint64_t{8} << 20);  // reverse UDP: about 1 MiB of batch each
}

TEST_CASE("one client holds at most its share, others still fit, holds give back", "[unit][budget]") {
  budget_limits l;
  l.tests = 8;
  l.streams = 100;
  l.client_share = 0.5;
  auto b = budget::create(l);
  std::string why;
  auto a1 = b->try_take("198.18.0.1", budget_cost{1, 50, 0, 0}, why);
  REQUIRE(a1);
  CHECK_FALSE(b->try_take("198.18.0.1", budget_cost{1, 1, 0, 0}, why));
  CHECK(why == "198.18.0.1 would hold 51 data streams, more than one client's share (50 of 100)");
  auto b1 = b->try_take("198.18.0.2", budget_cost{1, 50, 0, 0}, why);
  REQUIRE(b1);
  CHECK_FALSE(b->try_take("198.18.0.3", budget_cost{1, 1, 0, 0}, why));
  CHECK(why == "the server's data streams are taken (100 of 100 in use)");
  a1.reset();  // 198.18.0.1's test ends
  CHECK(b->try_take("198.18.0.3", budget_cost{1, 50, 0, 0}, why));
}

TEST_CASE("a cost too large to add up is refused, not wrapped", "[unit][budget]") {
  auto b = budget::create(budget_limits{});
  std::string why;
  auto small = b->try_take("c", budget_cost{0, 0, 1, 0}, why);
  REQUIRE(small);
  CHECK_FALSE(b->try_take("c", budget_cost{0, 0, ~std::uint64_t{0}, 0}, why));
  nb::test_request r;
  r.kind = nb::test_kind::tcp_stream;
  r.reverse = true;
  r.streams = ~std::uint32_t{0};
  r.message_size = ~std::uint32_t{0};
  CHECK(cost_of(r).buffer_bytes == r.streams * std::uint64_t{r.message_size});  // fits 64 bits: exact
}

TEST_CASE("a client is an IPv4 address or an IPv6 /64", "[unit][budget]") {
  using boost::asio::ip::make_address;
  CHECK(nb::serve::client_of(make_address("192.0.2.7")) == "192.0.2.7");
  CHECK(nb::serve::client_of(make_address("::ffff:192.0.2.7")) == "192.0.2.7");  // a dual-stack socket's IPv4 peer
  CHECK(nb::serve::client_of(make_address("2001:db8:1:2:aaaa::1")) == "2001:db8:1:2::/64");
  CHECK(nb::serve::client_of(make_address("2001:db8:1:2:bbbb::9")) == "2001:db8:1:2::/64");
}

TEST_CASE("connections in their first-message window: a few per address, given back when the window ends",
          "[unit][budget]") {
  auto window = per_client_count::create(2);
  auto a1 = window->try_take("198.18.0.1");
  auto a2 = window->try_take("198.18.0.1");
  REQUIRE((a1 && a2));
  CHECK_FALSE(window->try_take("198.18.0.1"));  // its third waits for nothing: refused
  CHECK(window->try_take("198.18.0.2"));        // another address has its own
  CHECK(window->held("198.18.0.2") == 0);       // (given back as that hold went)
  a1.reset();                                   // a first message came
  CHECK(window->held("198.18.0.1") == 1);
  CHECK(window->try_take("198.18.0.1"));
  CHECK(nb::serve::first_message_window_per_client == 32);  // what the README and --help state
}
