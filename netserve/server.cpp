#include "netserve/server.hpp"

#include "netserve/native/control_connection.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>

#include "core/base/clock.hpp"
#include "core/base/limits.hpp"
#include "core/base/version.hpp"
#include "core/sys/kernel_features.hpp"

namespace nb::serve {

server::server(asio::io_context& io, server_options options)
    : io_(io), shared_(std::make_shared<server_shared>(server_shared{options, budget::create(options.budget), 0})) {}

void server::bind_port(served_port& p, std::uint16_t wanted) {
  const server_options& o = shared_->options;
  // Port 0: the kernel picks the TCP port, and another program may hold that UDP port.
  for (int attempt = 0; attempt < 50; ++attempt) {
    endpoint local = endpoint::from_numeric(o.bind, wanted);
    auto acceptor = std::make_unique<tcp::acceptor>(io_);
    tcp::endpoint tep(asio::ip::make_address(o.bind), wanted);
    acceptor->open(tep.protocol());
    acceptor->set_option(tcp::acceptor::reuse_address(true));
    if (tep.address().is_v6()) acceptor->set_option(asio::ip::v6_only(false));
    boost::system::error_code ec;
    acceptor->bind(tep, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot bind TCP port {} on {}: {}", wanted, o.bind, ec.message()));
    acceptor->listen(asio::socket_base::max_listen_connections);
    std::uint16_t number = acceptor->local_endpoint().port();
    local.set_port(number);
    try {
      int rcvbuf = o.rcvbuf > 0 ? o.rcvbuf : default_rcvbuf(o.rx_cpus.size());
      std::vector<udp_lane> lanes = bind_lanes(local, o.rx_cpus, rcvbuf);
      p.number = number;
      p.acceptor = std::move(acceptor);
      p.udp = std::make_shared<udp_port>(std::move(lanes), o.gro);
      return;
    } catch (const std::system_error& e) {
      // Only a taken number is worth another try.
      if (wanted != 0 || e.code() != std::errc::address_in_use)
        throw std::runtime_error(fmt::format("cannot bind UDP port {} on {}: {}", number, o.bind, e.what()));
    }
  }
  throw std::runtime_error("cannot find a port free for both TCP and UDP");
}

void server::bind() {
  for (auto wanted : shared_->options.ports) {
    auto p = std::make_shared<served_port>();
    bind_port(*p, wanted);
    shared_->own_ports->ports.add(p->number);
    ports_.push_back(std::move(p));
  }
}

std::string server::ready_line() const {
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& p : ports_) ports.push_back(p->number);
  nlohmann::json kernel = nlohmann::json::object();
  for (kernel_feature f : all_kernel_features) kernel[std::string(switch_name(f))] = kernel_has(f);
  const xdp_engine* x = shared_->options.xdp.get();
  return nlohmann::json{{"event", "ready"},
                        {"program", "netserve"},
                        {"version", version},
                        {"bind", shared_->options.bind},
                        {"ports", ports},
                        {"pid", ::getpid()},
                        {"kernel", kernel},
                        {"receive_engine", x ? x->name() : "socket"},
                        {"interface", x ? nlohmann::json(x->interface()) : nlohmann::json(nullptr)}}
      .dump();
}

void server::start() {
  for (auto& p : ports_)
    asio::co_spawn(io_, accept_loop(p), [n = p->number](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        fmt::print(stderr, "netserve: port {}: accept loop ended: {}\n", n, x.what());
      }
    });
}

void server::stop() {
  for (auto& p : ports_) {
    boost::system::error_code ignored;
    p->acceptor->close(ignored);
  }
}

asio::awaitable<void> server::accept_loop(std::shared_ptr<served_port> port) {
  served_port& p = *port;
  for (;;) {
    auto [ec, socket] = co_await p.acceptor->async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::operation_aborted || !p.acceptor->is_open()) co_return;
    if (ec) {  // EMFILE and the like: log, breathe, keep serving
      fmt::print(stderr, "netserve: port {}: accept: {}\n", p.number, ec.message());
      asio::steady_timer pause(io_, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::use_awaitable);
      continue;
    }
    boost::system::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    if (peer_ec) continue;
    const std::string client = client_of(peer.address());
    // A unit of the budget, and a place in the first-message window: docs/netserve.md#budget
    std::string why;
    auto held = shared_->process_budget->try_take(client, budget_cost{0, 0, 0, 1}, why);
    auto window = shared_->first_message_window->try_take(client);
    if (!held || !window) {
      if (!window)
        why = fmt::format("{} connections from it have not sent their first message yet",
                          shared_->first_message_window->per_client());
      log_refused_connection(client, why);
      continue;
    }
    socket.set_option(tcp::no_delay(true), peer_ec);
    // As in the Asio examples, the coroutine holds its connection to the end.
    auto connection =
        std::make_shared<control_connection>(std::move(socket), port, shared_, std::move(*held), std::move(*window));
    asio::co_spawn(
        io_, [connection] { return connection->run(); }, [](std::exception_ptr) {});
  }
}

void server::log_refused_connection(const std::string& client, const std::string& why) {
  ++refusals_unlogged_;
  const std::int64_t now = mono_ns();
  if (now - refusal_logged_ns_ < 1'000'000'000) return;
  fmt::print(stderr, "netserve: refused {} connection(s), the last from {}: {}\n", refusals_unlogged_, client, why);
  refusal_logged_ns_ = now;
  refusals_unlogged_ = 0;
}

}  // namespace nb::serve
