#include "harness/watch/http_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace harness::watch {

namespace {

// tchar of RFC 9110: the characters of a method and of a field name.
bool is_tchar(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (std::isalnum(u)) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_tchar(c)) return false;
  return true;
}

// A field value: visible characters, spaces and tabs, and obs-text (bytes >= 0x80); no other control.
bool is_field_value(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

// An origin-form target: starts with '/', visible ASCII only (no space, no control, no raw 8-bit byte).
bool is_origin_target(std::string_view s) {
  if (s.empty() || s.front() != '/') return false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return false;
  }
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The origin form of a target: itself when it is one; the path and query of an absolute-form http(s)
// target with an authority ("http://h:9464/metrics?x" gives "/metrics?x", "http://h:9464" gives "/");
// empty when it is neither.
std::string origin_form(std::string_view target) {
  if (is_origin_target(target)) return std::string(target);
  const auto sep = target.find("://");
  if (sep == std::string_view::npos ||
      !(iequals(target.substr(0, sep), "http") || iequals(target.substr(0, sep), "https")))
    return {};
  const auto rest = target.substr(sep + 3);
  const auto path_at = std::min(rest.find('/'), rest.find('?'));  // npos when neither
  const auto authority = rest.substr(0, path_at);
  std::string origin = path_at == std::string_view::npos ? "/" : std::string(rest.substr(path_at));
  if (origin.front() == '?') origin.insert(0, "/");
  if (authority.empty() || !is_origin_target("/" + std::string(authority)) || !is_origin_target(origin)) return {};
  return origin;
}

// The next line, without its CRLF; false when there is no CRLF, or a CR or LF stands alone before it.
bool next_line(std::string_view& rest, std::string_view& line) {
  const auto end = rest.find("\r\n");
  if (end == std::string_view::npos) return false;
  line = rest.substr(0, end);
  if (line.find_first_of("\r\n") != std::string_view::npos) return false;
  rest.remove_prefix(end + 2);
  return true;
}

head_status parse_request_line(std::string_view line, request_head& h) {
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return head_status::bad_request;
  const auto method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1), version = line.substr(sp2 + 1);
  const std::string origin = origin_form(target);
  if (!is_token(method) || origin.empty()) return head_status::bad_request;
  if (version.size() != 8 || !version.starts_with("HTTP/") || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[5])) || !std::isdigit(static_cast<unsigned char>(version[7])))
    return head_status::bad_request;
  if (version[5] != '1' || (version[7] != '0' && version[7] != '1')) return head_status::bad_version;
  h.method = method;
  h.target = origin;
  h.minor_version = version[7] - '0';
  return head_status::ok;
}

}  // namespace

parsed_head parse_request_head(std::string_view text) {
  parsed_head out;
  if (text.size() > max_request_head) {
    out.status = head_status::too_large;
    return out;
  }
  std::string_view rest = text, line;
  // A client may send empty lines before the request line (RFC 9112 2.2); a few, not a stream of them.
  for (int i = 0; i < 4 && rest.starts_with("\r\n"); ++i) rest.remove_prefix(2);
  if (!next_line(rest, line)) return out;
  out.status = parse_request_line(line, out.head);
  if (out.status != head_status::ok) return out;
  std::size_t fields = 0;
  for (;;) {
    if (!next_line(rest, line)) {
      out.status = head_status::bad_request;  // the head never ended with an empty line
      return out;
    }
    if (line.empty()) break;
    // obs-fold (a line starting with white space) is refused, as RFC 9112 5.2 allows.
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon)) ||
        !is_field_value(line.substr(colon + 1))) {
      out.status = head_status::bad_request;
      return out;
    }
    if (++fields > max_header_fields) {
      out.status = head_status::too_large;
      return out;
    }
  }
  // Whatever follows the head (a body, a pipelined request) is not read: the answer closes the connection.
  return out;
}

std::size_t request_head_end(std::string_view received) {
  for (std::size_t lf = received.find('\n'); lf != std::string_view::npos; lf = received.find('\n', lf + 1)) {
    if (lf == 0 || received[lf - 1] != '\r') return lf + 1;  // a bare LF: the head is bad already
    if (lf >= 3 && received.substr(lf - 3, 4) == "\r\n\r\n") return lf + 1;
  }
  return std::string_view::npos;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

std::string_view target_path(std::string_view target) { return target.substr(0, target.find('?')); }

std::string serialize(const response& r) {
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n{}",
                     r.status, reason_phrase(r.status), r.content_type, r.body.size(),
                     r.allow_get ? "Allow: GET, HEAD\r\n" : "",
                     r.head_only ? std::string_view() : std::string_view(r.body));
}

}  // namespace harness::watch
