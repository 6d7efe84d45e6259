// `harness watch` in parts: the OpenMetrics exposition (names, label escaping, # EOF), the metrics
// endpoint's answers over 127.0.0.1, and the line each run prints.
#include "core/search/search_record.hpp"
#include "harness/process/process.hpp"
#include "harness/watch/metrics.hpp"
#include "harness/watch/metrics_server.hpp"
#include "harness/watch/watch_line.hpp"

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <regex>
#include <thread>

using namespace harness::watch;
using std::chrono::seconds;

namespace {

harness::run_summary measured_run() {
  harness::run_summary s;
  s.run.id = "t-m64";
  s.run.test = "t \"quoted\" \\ back\nslash";
  s.run.role = "device receives";
  s.run.message_size = 64;
  s.run.t0 = 1764760000.5;
  s.run.spec = {{"id", s.run.id}};
  s.ok = true;
  s.sender = {2000, 128000, 2000, 1024000};
  s.receiver = {1990, 127360, 1990, 1018880};
  s.loss_percent = 0.5;
  for (const char* name : {"01-a", "02-a"}) {
    harness::instance_record i;
    i.name = name;
    nb::test_result t;
    t.ok = true;
    t.sender.pps = 1000;
    t.sender.bits_per_second = 512000;
    t.receiver.pps = 995;
    t.receiver.bits_per_second = 509440;
    t.loss.percent = 0.5;
    i.result = t;
    s.run.instances.push_back(i);
  }
  return s;
}

// The value of the sample whose line starts with `prefix` (name and labels), or NaN when none.
double sample(const std::string& text, const std::string& prefix) {
  const auto at = text.find("\n" + prefix + " ");
  if (at == std::string::npos) return std::nan("");
  return std::stod(text.substr(at + prefix.size() + 2));
}

}  // namespace

TEST_CASE("harness watch: OpenMetrics text of the last run", "[harness][watch]") {
  // Quote and backslash escaped as the format says; a newline is the text \n (written \\n), as on a terminal.
  CHECK(escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\\\nd");
  const std::string empty = render_openmetrics({}, std::nullopt);
  CHECK(empty.ends_with("\n# EOF\n"));
  CHECK(empty.find("# TYPE netbench_received_packets_per_second gauge\n") != std::string::npos);
  CHECK(empty.find("# TYPE netbench_runs counter\n# HELP netbench_runs ") != std::string::npos);
  CHECK(empty.find("\nnetbench_runs_total 0\n") != std::string::npos);

  completed_run last{"lb", {measured_run()}, {}, std::nullopt};
  last.searches.push_back(
      {{"id", "s-m64"},
       {"test", "s"},
       {"role", "device receives"},
       {"message_size", 64},
       {"search",
        {{"results",
          {{{"loss_target_pct", 0.1}, {"rate_pps", 12345.0}}, {{"loss_target_pct", 1.0}, {"rate_pps", nullptr}}}}}}});
  // An MLRsearch's goals: each goal's relevant lower bound, by its loss ratio; none without one.
  nb::search::search_record search;
  search.goals = {nb::search::pdr_goal(), nb::search::pdr_goal()};
  search.goals[1].loss_ratio = 0.02;
  search.goal_results = nb::search::goal_results_of(search.goals, nullptr, false, "");
  search.goal_results[0].relevant_lower_bound = 23456.0;
  last.searches.push_back({{"id", "g-m64"},
                           {"test", "g"},
                           {"role", "device receives"},
                           {"message_size", 64},
                           {"search", nb::search::to_json(search)}});
  const std::string text = render_openmetrics({3, 1, 0}, last);
  const std::string labels =
      R"(plan="lb",test="t \"quoted\" \\ back\\nslash",measurement="t-m64",role="device receives",message_size="64",netbench_instance=)";
  CHECK(sample(text, "netbench_received_packets_per_second{" + labels + "\"all\"}") == 1990);
  CHECK(sample(text, "netbench_sent_packets_per_second{" + labels + "\"all\"}") == 2000);
  CHECK(sample(text, "netbench_received_bytes_per_second{" + labels + "\"all\"}") == 127360);
  CHECK(sample(text, "netbench_received_packets_per_second{" + labels + "\"01-a\"}") == 995);
  CHECK(sample(text, "netbench_sent_bytes_per_second{" + labels + "\"02-a\"}") == 64000);
  CHECK(sample(text, "netbench_loss_ratio{" + labels + "\"all\"}") == Approx(0.005));
  CHECK(sample(text, "netbench_last_run_timestamp_seconds{" + labels + "\"all\"}") == 1764760000.5);
  CHECK(sample(text, "netbench_regression{" + labels + "\"all\"}") == 0);
  CHECK(
      sample(
          text,
          R"(netbench_pdr_packets_per_second{plan="lb",test="s",measurement="s-m64",role="device receives",message_size="64",netbench_instance="all",loss_target_ratio="0.001"})") ==
      12345);
  CHECK(text.find("loss_target_ratio=\"0.01\"") == std::string::npos);  // nothing passed: no rate, not 0
  CHECK(
      sample(
          text,
          R"(netbench_pdr_packets_per_second{plan="lb",test="g",measurement="g-m64",role="device receives",message_size="64",netbench_instance="all",loss_target_ratio="0.005"})") ==
      23456);
  CHECK(text.find("loss_target_ratio=\"0.02\"") == std::string::npos);
  CHECK(sample(text, "netbench_runs_total") == 3);
  CHECK(sample(text, "netbench_failed_runs_total") == 1);
  CHECK(sample(text, "netbench_interrupted_runs_total") == 0);
  CHECK(text.ends_with("\n# EOF\n"));
  // Every line is a comment, or name{labels} value: no raw newline or quote escaped a label value.
  const std::regex line(
      R"((# (TYPE|HELP) [a-z_]+ .*)|([a-z_]+(\{([a-z_]+="([^"\\\n]|\\[\\"n])*",?)*\})? [-+0-9.eE]+(Inf|NaN)?))");
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos && text.compare(start, 5, "# EOF") != 0;
       start = end + 1)
    CHECK(std::regex_match(text.substr(start, end - start), line));

  last.verdict = harness::store::judgement{};
  harness::store::judged m;
  m.measurement = "t-m64";
  m.test = last.runs[0].run.test;
  m.role = "device receives";
  m.message_size = 64;
  m.regression = true;
  last.verdict->measurements.push_back(m);
  CHECK(sample(render_openmetrics({}, last), "netbench_regression{" + labels + "\"all\"}") == 1);
  last.runs[0].ok = false;  // a failed run: no figures (never zeros)
  CHECK(render_openmetrics({}, last).find("netbench_received_packets_per_second{") == std::string::npos);
}

// Names from a plan are checked when it is read, but a results database or folder (the store's verdict, a
// run's records) may carry anything: no control byte reaches the exposition raw, nor a byte of no UTF-8
// character (a scraper refuses the whole exposition for one), and the real promtool accepts the text.
TEST_CASE("harness watch: OpenMetrics labels carry no raw control byte", "[harness][watch][names]") {
  const std::string hostile = "t\x1b]0;title\x07\x1b[2J\rFORGED \xc2\x9b\xff\x7f\"\\";
  completed_run last{"p\x1b[31m", {measured_run()}, {}, std::nullopt};
  last.runs[0].run.test = hostile;
  last.runs[0].run.role = "r\r\n# EOF";
  last.runs[0].run.instances[0].name = "01-\x07";
  const std::string text = render_openmetrics({1, 0, 0}, last);
  std::size_t raw = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    raw += (c < 0x20 && c != '\n') || c == 0x7f || c == 0xff ||
           (c == 0xc2 && i + 1 < text.size() && text[i + 1] == '\x9b');
  }
  fmt::print("OpenMetrics text with hostile names: {} raw control or non-UTF-8 byte(s)\n", raw);
  CHECK(raw == 0);
  CHECK(text.find("\n# EOF\n") == text.size() - 7);  // the only # EOF: a name did not end the text
  CHECK(sample(text,
               R"(netbench_received_packets_per_second{plan="p\\x1b[31m",test="t\\x1b]0;title\\x07\\x1b[2J\\rFORGED )"
               R"(\\xc2\\x9b\\xff\\x7f\"\\",measurement="t-m64",role="r\\r\\n# EOF",message_size="64",)"
               R"(netbench_instance="all"})") == 1990);
  CHECK(text.find(R"(netbench_instance="01-\\x07"} 995)") != std::string::npos);
  if (access("/usr/bin/promtool", X_OK) != 0) {
    WARN("promtool is not installed: the exposition's syntax was not checked by it");
    return;
  }
  boost::asio::io_context io;
  const auto o = nb::run_on(io, nb::run_command({"/usr/bin/promtool", "check", "metrics"}, seconds(20), text));
  // Status 1 is a text it cannot parse (a bad byte, a bad escape); 3 only its lint of the classic format,
  // which reads OpenMetrics' counter family `netbench_runs` and its sample `netbench_runs_total` as two.
  INFO(o.stdout_text << o.stderr_text);
  CHECK((o.exit_code == 0 || o.exit_code == 3));
  CHECK(o.stderr_text.find("error") == std::string::npos);
  CHECK(o.stdout_text.find("error") == std::string::npos);
}

TEST_CASE("harness watch: --listen takes an IP address and a port", "[harness][watch]") {
  CHECK_THROWS_AS(parse_listen("localhost:80"), std::invalid_argument);
  CHECK_THROWS_AS(parse_listen("127.0.0.1"), std::invalid_argument);
  CHECK_THROWS_AS(parse_listen("127.0.0.1:65536"), std::invalid_argument);
  CHECK(parse_listen("[::1]:0").address().is_v6());
  CHECK(parse_listen("127.0.0.1:9464").port() == 9464);
}

namespace {

// A metrics server on 127.0.0.1:0 served by a thread of its own, counting its renders.
struct endpoint {
  boost::asio::io_context io;
  std::atomic<int> rendered{0};
  metrics_server server{io, parse_listen("127.0.0.1:0"), [this] {
                          ++rendered;
                          return std::string("x 1\n# EOF\n");
                        }};
  std::thread serving;
  endpoint() {
    server.start();
    serving = std::thread([this] { io.run(); });
  }
  ~endpoint() {
    boost::asio::post(io, [this] { server.stop(); });
    serving.join();  // stop() leaves the io_context without work: run() returns
  }
  // One request on a connection of its own: all that came back before the server closed it.
  std::string ask(const std::string& request) const {
    boost::asio::io_context c;
    boost::asio::ip::tcp::socket s(c);
    s.connect(server.local_endpoint());
    boost::asio::write(s, boost::asio::buffer(request));
    std::string reply;
    boost::system::error_code ec;
    boost::asio::read(s, boost::asio::dynamic_buffer(reply), ec);
    return reply;
  }
  std::string status(const std::string& request) const { return ask(request).substr(0, 13); }
};

}  // namespace

TEST_CASE("harness watch: the endpoint serves GET and HEAD of /metrics only", "[harness][watch]") {
  endpoint e;
  const std::string reply = e.ask("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text\r\n\r\n");
  CHECK(reply.starts_with(
      "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n"));
  CHECK(reply.ends_with("\r\nContent-Length: 10\r\nConnection: close\r\n\r\nx 1\n# EOF\n"));
  CHECK(e.status("GET /metrics?x=1 HTTP/1.0\r\n\r\n") == "HTTP/1.1 200 ");
  CHECK(e.status("GET / HTTP/1.1\r\n\r\n") == "HTTP/1.1 404 ");
  CHECK(e.status("GET /metrics/x HTTP/1.1\r\n\r\n") == "HTTP/1.1 404 ");
  CHECK(e.ask("POST /metrics HTTP/1.1\r\n\r\n").find("\r\nAllow: GET, HEAD\r\n") != std::string::npos);
  CHECK(e.status("DELETE /metrics HTTP/1.1\r\n\r\n") == "HTTP/1.1 405 ");
  CHECK(e.status("POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde") == "HTTP/1.1 405 ");  // never read
  CHECK(e.rendered == 2);  // only the requests that get the metrics render them
  // HEAD: GET's status and headers, its Content-Length too, and no body (RFC 9110 9.3.2).
  const std::string head = e.ask("HEAD /metrics HTTP/1.1\r\n\r\n");
  CHECK(head.starts_with("HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text"));
  CHECK(head.ends_with("\r\nContent-Length: 10\r\nConnection: close\r\n\r\n"));
  const std::string missing = e.ask("HEAD /x HTTP/1.1\r\n\r\n");
  CHECK(missing.starts_with("HTTP/1.1 404 "));
  CHECK(missing.ends_with("\r\nConnection: close\r\n\r\n"));
}

// The absolute form a server must accept (RFC 9112 3.2.2) is served by its path.
TEST_CASE("harness watch: the endpoint takes targets in origin and absolute form", "[harness][watch]") {
  endpoint e;
  const auto at = e.server.local_endpoint();
  CHECK(e.ask(fmt::format("GET http://{}:{}/metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n", at.address().to_string(),
                          at.port()))
            .ends_with("\r\n\r\nx 1\n# EOF\n"));
  CHECK(e.status("GET HTTP://[::1]:9464 HTTP/1.1\r\n\r\n") == "HTTP/1.1 404 ");  // the path "/"
  CHECK(e.status("GET https://h?x HTTP/1.1\r\n\r\n") == "HTTP/1.1 404 ");
  // A query is no business of the path: bytes RFC 3986 would have escaped are served as curl sends them.
  CHECK(e.status("GET /metrics?a|b&c[]={d}&e=%zz HTTP/1.1\r\n\r\n") == "HTTP/1.1 200 ");
  CHECK(e.status("GET /metrics#x HTTP/1.1\r\n\r\n") == "HTTP/1.1 404 ");
  for (const char* bad : {"GET http:///metrics HTTP/1.1\r\n\r\n", "GET ftp://h/metrics HTTP/1.1\r\n\r\n",
                          "GET http:/h/metrics HTTP/1.1\r\n\r\n", "GET http://h/\x80 HTTP/1.1\r\n\r\n",
                          "GET http://h\x7f/metrics HTTP/1.1\r\n\r\n", "GET ://h/metrics HTTP/1.1\r\n\r\n",
                          "GET metrics HTTP/1.1\r\n\r\n", "GET /\x80 HTTP/1.1\r\n\r\n"}) {
    INFO(bad);
    CHECK(e.status(bad) == "HTTP/1.1 400 ");
  }
}

// What Beast refuses is 400, at once: bare LF line ends too (RFC 9112 2.2 lets a server refuse them), not
// left to the head deadline. Beast reads HTTP/1.x only (HTTP/2.0 is 400, not 505), refuses an empty line
// before the request line, and unfolds an obs-fold (RFC 9112 5.2 allows either).
TEST_CASE("harness watch: the endpoint refuses malformed and oversized heads", "[harness][watch]") {
  endpoint e;
  const auto before = std::chrono::steady_clock::now();
  for (const char* bad :
       {"GET /metrics HTTP/1.1\n\n", "GET /metrics HTTP/1.1\nHost: x\n\n", "GET /metrics HTTP/1.1\r\nHost: x\n\n",
        "GET  /metrics HTTP/1.1\r\n\r\n", "GET /metrics\r\n\r\n", "GET /met rics HTTP/1.1\r\n\r\n",
        "G(T /metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/1.1\r\nNo colon\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nA b: c\r\n\r\n", "GET /metrics HTTP/1.1\r\nA: b\rc\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nA: \x01\r\n\r\n", "GET /metrics HTTP/x.1\r\n\r\n", "GET /metrics HTTP/1.10\r\n\r\n",
        "GET /metrics HTTP/2.0\r\n\r\n", "\r\nGET /metrics HTTP/1.1\r\n\r\n"}) {
    INFO(bad);
    CHECK(e.status(bad) == "HTTP/1.1 400 ");
  }
  CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(1));
  CHECK(e.status("GET /metrics HTTP/1.1\r\nA: b\r\n folded\r\n\r\n") == "HTTP/1.1 200 ");
  std::string many = "GET /metrics HTTP/1.1\r\n";
  for (std::size_t i = 0; i <= metrics_server::max_header_fields; ++i) many += fmt::format("X-{}: y\r\n", i);
  CHECK(e.status(many + "\r\n") == "HTTP/1.1 431 ");
  CHECK(e.status("GET /" + std::string(metrics_server::max_request_head, 'a') + " HTTP/1.1\r\n\r\n") ==
        "HTTP/1.1 431 ");
  CHECK(e.status(std::string(metrics_server::max_request_head + 10, 'G')) == "HTTP/1.1 431 ");
  CHECK(e.rendered == 1);
}

TEST_CASE("harness watch: the line of a run says when it started and its verdict", "[harness][watch]") {
  run_timing t{2, seconds(2), std::chrono::milliseconds(2030), std::chrono::milliseconds(1500), 1764760000};
  harness::finished_run f;
  f.dir = "/r/w-20251203T110640Z";
  f.runs.push_back(measured_run());
  f.runs[0].run.id = "t-m64";
  CHECK(
      run_line(t, f) ==
      "run 2 at 2025-12-03T11:06:40Z, 2.03 s after run 1 started: w-20251203T110640Z: ok, not judged (not recorded in "
      "a results database): t-m64 received 1990.0 pps");
  t.previous_took = std::chrono::milliseconds(2500);
  f.verdict = harness::store::judgement{};
  f.verdict->baseline_kind = "up to 5 earlier results folders of the plan";
  harness::store::judged m;
  m.measurement = "t-m64";
  m.role = "device receives";
  m.current.mean = 1400;
  m.baseline.mean = 2000;
  m.change_percent = -30;
  m.regression = true;
  f.verdict->measurements.push_back(m);
  m.measurement = "u-m64";
  m.regression = false;
  f.verdict->measurements.push_back(m);
  CHECK(run_line(t, f) ==
        "run 2 at 2025-12-03T11:06:40Z, at once after run 1 ended (it took 2.50 s, longer than --every 2 s): "
        "w-20251203T110640Z: REGRESSION against up to 5 earlier results folders of the plan: t-m64 (device receives) "
        "received 1400.0 pps against 2000.0 (-30.0 %)");
  f.signal = SIGINT;
  CHECK(run_line(t, f).ends_with(": w-20251203T110640Z: INTERRUPTED by SIGINT, recorded as interrupted"));
}

TEST_CASE("harness watch: a failed run's line says what failed", "[harness][watch]") {
  harness::finished_run f;
  f.dir = "/r/w-20251203T110640Z";
  f.status = 3;
  f.runs.push_back(measured_run());
  f.runs[0].ok = false;
  f.runs[0].failures = {"01-a: netload failed: connection refused", "02-a: netload failed: connection refused"};
  f.runs.push_back(f.runs[0]);
  f.verdict = harness::store::judgement{};
  CHECK(run_line({1, seconds(2), {}, {}, 1764760000}, f) ==
        "run 1 at 2025-12-03T11:06:40Z: w-20251203T110640Z: FAILED (t-m64: 01-a: netload failed: connection refused, "
        "and 1 more run(s)), no baseline yet");
}

TEST_CASE("harness watch: a skewed run's line says who started late, with its figures", "[harness][watch]") {
  harness::finished_run f;
  f.dir = "/r/w-20251203T110640Z";
  f.status = 5;
  f.runs.push_back(measured_run());
  f.runs[0].late = {{"02-a", 23.3}};
  f.verdict = harness::store::judgement{};
  CHECK(run_line({1, seconds(2), {}, {}, 1764760000}, f) ==
        "run 1 at 2025-12-03T11:06:40Z: w-20251203T110640Z: SKEWED (t-m64: 02-a started 23.3 ms after T0 "
        "(start-skew bound 20 ms)), no baseline yet: t-m64 received 1990.0 pps");
}

TEST_CASE("harness watch: a name or error with control characters stays on its one line", "[harness][watch]") {
  harness::finished_run f;
  f.dir = "/r/w\nx-20251203T110640Z";
  f.runs.push_back(measured_run());
  f.runs[0].run.id = "t\nrun 9 at 2099-01-01T00:00:00Z: forged\x1b[2J-m64";
  const std::string line = run_line({1, seconds(2), {}, {}, 1764760000}, f);
  CHECK(line.find_first_of("\n\r\x1b") == std::string::npos);
  CHECK(line ==
        "run 1 at 2025-12-03T11:06:40Z: w\\nx-20251203T110640Z: ok, not judged (not recorded in a results database): "
        "t\\nrun 9 at 2099-01-01T00:00:00Z: forged\\x1b[2J-m64 received 1990.0 pps");
  CHECK(error_line({1, seconds(2), {}, {}, 1764760000}, "host 'a\nb': gone\r") ==
        "run 1 at 2025-12-03T11:06:40Z: ERROR, the run did not start: host 'a\\nb': gone\\r");
}
