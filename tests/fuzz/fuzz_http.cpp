// Fuzz target for the metrics server's request parser: any bytes from whoever reaches the --listen port
// must become a request head or a 4xx/5xx status, never a crash, a hang or an exception; and the answer
// built from it must be a well-formed HTTP/1.1 response that renders the metrics only for GET or HEAD of
// /metrics, and sends no body to HEAD.
#include "harness/watch/http_request.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace harness::watch;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const parsed_head p = parse_request_head(text);
  if (p.status == head_status::ok) {
    // What was accepted is within the bounds, and a request line the parser would accept again.
    if (text.size() > max_request_head || p.head.method.empty() || p.head.target.empty() || p.head.target[0] != '/')
      __builtin_trap();
    if (p.head.minor_version != 0 && p.head.minor_version != 1) __builtin_trap();
    const std::string again =
        p.head.method + " " + p.head.target + " HTTP/1." + std::to_string(p.head.minor_version) + "\r\n\r\n";
    if (parse_request_head(again).status != head_status::ok) __builtin_trap();
  }
  bool rendered = false;
  const response r = answer(p, [&] {
    rendered = true;
    return std::string("# EOF\n");
  });
  const bool head_only = p.status == head_status::ok && p.head.method == "HEAD";
  const bool wanted =
      p.status == head_status::ok && (p.head.method == "GET" || head_only) && target_path(p.head.target) == "/metrics";
  if (rendered != wanted || (r.status == 200) != wanted) __builtin_trap();
  const std::string out = serialize(r);
  if (!out.starts_with("HTTP/1.1 ") || out.find("\r\n\r\n") == std::string::npos) __builtin_trap();
  if (head_only && !out.ends_with("\r\n\r\n")) __builtin_trap();  // HEAD: never a body
  // The server parses what request_head_end gives it: never more than came.
  if (const auto end = request_head_end(text); end != std::string_view::npos && end > text.size()) __builtin_trap();
  return 0;
}
