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
  std::string method, target;  // target: the origin form ("/metrics?x=1"), as sent
  int minor_version = 1;       // HTTP/1.0 or HTTP/1.1
};

enum class head_status {
  ok,
  bad_request,      // 400: not a request line, a field that is not a field, a bare LF, obs-fold
  too_large,        // 431: more than max_request_head bytes or max_header_fields fields
  bad_version,      // 505: not HTTP/1.0 or HTTP/1.1
};

struct parsed_head {
  head_status status = head_status::bad_request;
  request_head head;
};

// `text`: the bytes up to and including the first CRLF CRLF (or all that came, when it never did).
parsed_head parse_request_head(std::string_view text);

// The answer to a request: 200 with the metrics for GET of /metrics (any query), 404 for another path,
// 405 for another method; the status line, headers (Connection: close) and body.
struct response {
  int status = 200;
  std::string content_type, body;
  bool allow_get = false;  // 405: says Allow: GET
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
