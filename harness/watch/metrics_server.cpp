#include "harness/watch/metrics_server.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/src.hpp>  // Boost.URL header-only: its compiled part, in this one file

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <stdexcept>

namespace harness::watch {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace urls = boost::urls;
using request = http::request<http::empty_body>;
using response = http::response<http::string_body>;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr const char* openmetrics_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";

// The path of a target in origin form ("/metrics?x") or in absolute form ("http://host:port/metrics",
// which a server must accept, RFC 9112 3.2.2); none for another form or a malformed one.
std::optional<std::string> target_path(std::string_view target) {
  // Visible ASCII only (RFC 9112 3.2); in origin form the path is what precedes the query, whatever bytes
  // the query holds (curl sends them raw).
  if (std::any_of(target.begin(), target.end(), [](unsigned char c) { return c < 0x21 || c > 0x7e; }))
    return std::nullopt;
  if (target.starts_with('/')) return std::string(target.substr(0, target.find('?')));
  const auto absolute = urls::parse_absolute_uri(target);
  if (!absolute || absolute->encoded_host().empty() ||
      (absolute->scheme_id() != urls::scheme::http && absolute->scheme_id() != urls::scheme::https))
    return std::nullopt;
  return absolute->encoded_path().empty() ? std::string("/") : std::string(absolute->encoded_path());
}

// What a head read with `ec` gets: 200 for GET or HEAD of /metrics, 404 for another path, 405 for another
// method, 400 or 431 for a head Beast refused; none when the peer closed, reset or timed out first.
std::optional<http::status> status_of(boost::system::error_code ec, const request& req) {
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) return std::nullopt;
  if (ec && ec.category() != http::make_error_code(http::error::bad_method).category())
    return std::nullopt;  // a reset, the deadline, stop()
  if (ec == http::error::header_limit) return http::status::request_header_fields_too_large;
  if (ec) return http::status::bad_request;
  if (static_cast<std::size_t>(std::distance(req.begin(), req.end())) > metrics_server::max_header_fields)
    return http::status::request_header_fields_too_large;
  const auto path = target_path(req.target());
  if (!path) return http::status::bad_request;
  if (req.method() != http::verb::get && req.method() != http::verb::head) return http::status::method_not_allowed;
  return *path == "/metrics" ? http::status::ok : http::status::not_found;
}

// One request per connection: every answer says Connection: close. HEAD gets GET's headers, its
// Content-Length included, without the body (RFC 9110 9.3.2).
response make_answer(http::status status, bool head_only, const std::function<std::string()>& render) {
  response r{status, 11};
  const bool metrics = status == http::status::ok;
  r.set(http::field::content_type, metrics ? openmetrics_type : "text/plain; charset=utf-8");
  r.body() = metrics ? render()
                     : fmt::format("{}{}\n", std::string_view(http::obsolete_reason(status)),
                                   status == http::status::not_found ? ": the metrics are at /metrics" : "");
  r.content_length(r.body().size());
  if (status == http::status::method_not_allowed) r.set(http::field::allow, "GET, HEAD");
  r.keep_alive(false);
  if (head_only) r.body().clear();
  return r;
}

// The head within head_timeout of the accept: an idle connection is closed long before it could keep a
// scraper out. The whole exchange within request_timeout: a client that never reads holds it no longer.
asio::awaitable<void> answer_request(beast::tcp_stream& stream, const std::function<std::string()>& render) {
  const auto accepted = std::chrono::steady_clock::now();
  stream.expires_after(metrics_server::head_timeout);
  beast::flat_buffer buffer;
  http::request_parser<http::empty_body> parser;
  parser.header_limit(metrics_server::max_request_head);
  // The head only: no answer needs a body, and the connection closes after the answer.
  const auto [ec, read] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
  const auto status = status_of(ec, parser.get());
  if (!status) co_return;
  stream.expires_at(accepted + metrics_server::request_timeout);
  const response answer = make_answer(*status, !ec && parser.get().method() == http::verb::head, render);
  const auto [write_ec, written] = co_await http::async_write(stream, answer, use_tuple);
  boost::system::error_code ignored;
  if (!write_ec) stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
}

}  // namespace

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
  beast::tcp_stream stream(std::move(s));
  open_.insert(&stream.socket());
  if (stopped_) stream.close();  // accepted just before stop(): nothing to serve
  try {
    co_await answer_request(stream, render_);
  } catch (const std::exception&) {
    // the metrics could not be rendered: the connection closes unanswered
  }
  open_.erase(&stream.socket());
  --open_count_;
  if (--per_source_[source] == 0) per_source_.erase(source);
}

}  // namespace harness::watch
