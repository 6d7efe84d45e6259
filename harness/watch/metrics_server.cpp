#include "harness/watch/metrics_server.hpp"

#include "harness/watch/http_request.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <stdexcept>
#include <variant>

namespace harness::watch {

namespace {
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
}

asio::ip::tcp::endpoint parse_listen(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument(fmt::format("'{}': not ADDRESS:PORT (e.g. 127.0.0.1:9464, [::1]:0)", text));
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535)
    throw std::invalid_argument(fmt::format("'{}': '{}' is not a port (0 to 65535)", text, port_text));
  boost::system::error_code bad;
  const auto address = asio::ip::make_address(host, bad);
  if (bad) throw std::invalid_argument(fmt::format("'{}': '{}' is not an IP address", text, host));
  return {address, static_cast<std::uint16_t>(port)};
}

metrics_server::metrics_server(asio::io_context& io, const asio::ip::tcp::endpoint& at,
                               std::function<std::string()> render)
    : io_(io), acceptor_(io), render_(std::move(render)) {
  boost::system::error_code ec;
  acceptor_.open(at.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(at, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error(fmt::format("--listen {}:{}: {}", at.address().to_string(), at.port(), ec.message()));
}

void metrics_server::start() { asio::co_spawn(io_, accept_loop(), asio::detached); }

void metrics_server::stop() {
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (auto* s : open_) s->close(ignored);
}

asio::ip::address metrics_server::source_of(const asio::ip::address& peer) {
  if (peer.is_v4()) return peer;
  const auto v6 = peer.to_v6();
  if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6);
  auto bytes = v6.to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return asio::ip::address_v6(bytes);
}

asio::awaitable<void> metrics_server::accept_loop() {
  asio::steady_timer backoff(io_);
  while (!stopped_) {
    auto [ec, sock] = co_await acceptor_.async_accept(use_tuple);
    if (stopped_ || ec == asio::error::operation_aborted) co_return;
    if (ec) {  // out of descriptors and the like: a pause, not a loop spinning on the error
      backoff.expires_after(std::chrono::milliseconds(100));
      co_await backoff.async_wait(use_tuple);
      continue;
    }
    boost::system::error_code peer_ec;
    const auto peer = sock.remote_endpoint(peer_ec);
    if (peer_ec) continue;  // already reset
    const auto source = source_of(peer.address());
    const auto held = per_source_.find(source);
    // Beyond either budget `sock` closes as it goes out of scope: the others' connections stay served.
    if (open_count_ >= max_connections || (held != per_source_.end() && held->second >= max_connections_per_source))
      continue;
    ++per_source_[source];
    ++open_count_;
    asio::co_spawn(io_, serve(std::move(sock), source), asio::detached);
  }
}

asio::awaitable<void> metrics_server::serve(asio::ip::tcp::socket s, asio::ip::address source) {
  using namespace asio::experimental::awaitable_operators;
  open_.insert(&s);
  boost::system::error_code ignored;
  if (stopped_) s.close(ignored);  // accepted just before stop(): nothing to serve
  // The head within head_timeout: an idle connection is closed long before it could keep a scraper
  // out. The whole exchange within request_timeout: a client that never reads the answer holds its
  // connection no longer.
  const auto accepted = std::chrono::steady_clock::now();
  asio::steady_timer deadline(io_, head_timeout);
  try {
    auto head = co_await (read_head(s) || deadline.async_wait(asio::use_awaitable));
    if (head.index() == 0 && std::get<0>(head)) {
      deadline.expires_at(accepted + request_timeout);
      co_await (write_answer(s, *std::get<0>(head)) || deadline.async_wait(asio::use_awaitable));
    }
  } catch (const std::exception&) {
    // a reset connection or the deadline's cancellation: nothing to answer to
  }
  open_.erase(&s);
  --open_count_;
  if (--per_source_[source] == 0) per_source_.erase(source);
}

asio::awaitable<std::optional<parsed_head>> metrics_server::read_head(asio::ip::tcp::socket& s) {
  std::string buf;
  std::array<char, 2048> chunk;
  std::size_t end;
  parsed_head p;
  // Read until the head ends, or a bare LF already makes it bad (answered at once, not at the deadline),
  // or it holds one byte more than the limit without its blank line: too large.
  while ((end = request_head_end(buf)) == std::string::npos && buf.size() <= max_request_head) {
    const auto room = std::min(chunk.size(), max_request_head + 1 - buf.size());
    auto [ec, n] = co_await s.async_read_some(asio::buffer(chunk.data(), room), use_tuple);
    if (ec) co_return std::nullopt;  // closed before a whole head came
    buf.append(chunk.data(), n);
  }
  if (end == std::string::npos) p.status = head_status::too_large;
  else p = parse_request_head(std::string_view(buf).substr(0, end));
  co_return p;
}

asio::awaitable<void> metrics_server::write_answer(asio::ip::tcp::socket& s, const parsed_head& p) {
  const std::string out = serialize(answer(p, render_));
  co_await asio::async_write(s, asio::buffer(out), use_tuple);
  boost::system::error_code ignored;
  s.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
}

}  // namespace harness::watch
