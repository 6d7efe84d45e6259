#pragma once
// The head of an HTTP/1.x request (request line and header fields, RFC 9112), from anyone who can reach
// the metrics port: parsed strictly, every length bounded, nothing kept but what the answer needs.
#include <cstddef>
#include <string>
#include <string_view>

namespace harness::watch {

// The most a request head may take, with its blank line; a longer one is answered 431 unread.
inline constexpr std::size_t max_request_head = 8192;
inline constexpr std::size_t max_header_fields = 64;

struct request_head {
  // target: the origin form ("/metrics?x=1"); an absolute-form target ("http://host:port/metrics", which a
  // server must accept, RFC 9112 3.2.2) is reduced to its path and query.
  std::string method, target;
  int minor_version = 1;  // HTTP/1.0 or HTTP/1.1
};

enum class head_status {
  ok,
  bad_request,  // 400: not a request line, a field that is not a field, a bare LF, obs-fold
  too_large,    // 431: more than max_request_head bytes or max_header_fields fields
  bad_version,  // 505: not HTTP/1.0 or HTTP/1.1
};

struct parsed_head {
  head_status status = head_status::bad_request;
  request_head head;
};

// `text`: the bytes up to and including the first CRLF CRLF (or all that came, when it never did).
parsed_head parse_request_head(std::string_view text);

// How many bytes of what came so far make the head to parse: up to and including its CRLF CRLF, or up
// to and including the first bare LF (a request that is answered 400 at once, not left to wait for a
// CRLF CRLF that will never come); npos while neither has come.
std::size_t request_head_end(std::string_view received);

// The answer to a request: 200 with the metrics for GET of /metrics (any query), 404 for another path,
// 405 for a method other than GET and HEAD; the status line, headers (Connection: close) and body. HEAD
// gets GET's status and headers, Content-Length included, without the body (RFC 9110 9.3.2).
struct response {
  int status = 200;
  std::string content_type, body;
  bool allow_get = false;  // 405: says Allow: GET, HEAD
  bool head_only = false;  // HEAD: the body is counted in Content-Length, not sent
};
std::string serialize(const response& r);
// What a parsed request gets; `metrics` renders the body only when it is asked for.
template <typename Render>
response answer(const parsed_head& p, Render&& metrics);
const char* reason_phrase(int status);
// The path of an origin-form target, without its query.
std::string_view target_path(std::string_view target);

}  // namespace harness::watch

#include "harness/watch/http_answer.ipp"
