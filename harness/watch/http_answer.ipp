#pragma once
// answer(): a template, so that the body is rendered only for a request that gets it.
namespace harness::watch {

inline constexpr const char* openmetrics_content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";

template <typename Render>
response answer(const parsed_head& p, Render&& metrics) {
  response r;
  r.content_type = "text/plain; charset=utf-8";
  switch (p.status) {
    case head_status::bad_request: r.status = 400; break;
    case head_status::too_large: r.status = 431; break;
    case head_status::bad_version: r.status = 505; break;
    case head_status::ok:
      r.head_only = p.head.method == "HEAD";
      if (p.head.method != "GET" && p.head.method != "HEAD") {
        r.status = 405;
        r.allow_get = true;
      } else if (target_path(p.head.target) != "/metrics") {
        r.status = 404;
      } else {
        r.content_type = openmetrics_content_type;
        r.body = metrics();
        return r;
      }
      break;
  }
  r.body = std::string(reason_phrase(r.status)) + (r.status == 404 ? ": the metrics are at /metrics\n" : "\n");
  return r;
}

}  // namespace harness::watch
