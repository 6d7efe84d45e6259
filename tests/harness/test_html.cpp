// report.html's pieces: figure formats a reader can scan, escaping, and gnuplot's SVG made fit to sit
// inline beside other charts. (The whole page is rendered in Chromium by tests/report.)
#include "harness/report/html/gnuplot.hpp"
#include "harness/report/html/html.hpp"

#include <catch2/catch.hpp>

#include <regex>

namespace {

const std::string thin = "\u202f";  // between digit groups
const std::string nbsp = "\u00a0";  // between a figure and its unit

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("figures are grouped in threes with unit prefixes", "[html]") {
  using namespace harness::html;
  CHECK(grouped(9872.4) == "9" + thin + "872");
  CHECK(grouped(1234567.891, 2) == "1" + thin + "234" + thin + "567.89");
  CHECK(grouped(999) == "999");
  CHECK(grouped(-1234) == "-1" + thin + "234");
  CHECK(grouped(-0.0001, 2) == "0.00");
  CHECK(pps(1234567) == "1.23" + nbsp + "M" + nbsp + "pps");
  CHECK(pps(987) == "987" + nbsp + "pps");
  CHECK(pps(45678) == "45.7" + nbsp + "k" + nbsp + "pps");
  CHECK(pps(29.4e9) == "29.4" + nbsp + "G" + nbsp + "pps");
  CHECK(pps(999600) == "1.00" + nbsp + "M" + nbsp + "pps");  // rounded, the prefix moves up
  CHECK(pps(99960) == "100" + nbsp + "k" + nbsp + "pps");
  CHECK(pps(9996) == "10.0" + nbsp + "k" + nbsp + "pps");
  CHECK(mbps(9.872e9) == "9" + thin + "872" + nbsp + "Mbit/s");
  CHECK(mbps(12.34e6) == "12.3" + nbsp + "Mbit/s");
  CHECK(mbps(0.0123e6) == "0.0123" + nbsp + "Mbit/s");
}

TEST_CASE("a figure over repeats is its mean and the half-width of its interval", "[html]") {
  harness::spread one;
  one.n = 1;
  one.mean = one.ci_low = one.ci_high = 2e6;
  CHECK(harness::html::with_interval(one, harness::html::pps) == "2.00" + nbsp + "M" + nbsp + "pps");
  harness::spread three = one;
  three.n = 3;
  three.ci_low = 1.9e6;
  three.ci_high = 2.1e6;
  CHECK(harness::html::with_interval(three, harness::html::pps) ==
        "2.00" + nbsp + "M" + nbsp + "pps ±" + nbsp + "100" + nbsp + "k" + nbsp + "pps");
  CHECK(harness::html::with_interval(harness::spread{}, harness::html::pps) == "n/a");
}

TEST_CASE("text from a plan or a host is escaped", "[html]") {
  CHECK(harness::html::escape("<b a=\"x\">R&D's</b>") == "&lt;b a=&quot;x&quot;&gt;R&amp;D&#39;s&lt;/b&gt;");
  const std::string t = harness::html::table({"host", "rate"}, {{harness::html::escape("<script>"), "1"}});
  CHECK(t.find("<script>") == std::string::npos);
  CHECK(t.find("&lt;script&gt;") != std::string::npos);
}

TEST_CASE("gnuplot strings and datablocks", "[html][gnuplot]") {
  CHECK(harness::gp_quote("it's") == "'it''s'");
  CHECK(harness::gp_quote("two\nlines") == "'two lines'");
  CHECK(harness::gp_datablock("D", {{"1", "2"}, {"3", "4"}}) == "$D << EOD\n1 2\n3 4\nEOD\n");
}

TEST_CASE("gnuplot's SVG sits inline: no prologue, ids of its own, plot groups as a class", "[html][gnuplot]") {
  const std::string raw =
      "<?xml version=\"1.0\"?>\n<svg viewBox=\"0 0 10 10\">\n<g id=\"gnuplot_canvas\">\n<defs>"
      "<path id='gpPt6' d='M0,0'/></defs>\n<g id=\"gnuplot_plot_1a\" ><use xlink:href='#gpPt6'/></g>\n"
      "<g id=\"gnuplot_plot_12\" ></g></g></svg>\n";
  const std::string svg = harness::inline_svg(raw, "c7");
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("id='c7-gpPt6'") != std::string::npos);
  CHECK(svg.find("href='#c7-gpPt6'") != std::string::npos);
  CHECK(count(svg, "class=\"gnuplot-plot\"") == 2);
  CHECK(svg.find("id=\"gnuplot") == std::string::npos);
  CHECK_THROWS_AS(harness::inline_svg("Warning: nothing", "c1"), harness::chart_error);
}

TEST_CASE("gnuplot draws a chart, and says why it could not", "[html][gnuplot]") {
  const std::string svg =
      harness::render_svg("$D << EOD\n1 10\n2 20\n3 15\nEOD\nplot $D using 1:2 with lines title 'x'\n", 400, 300, "c3");
  CHECK(count(svg, "class=\"gnuplot-plot\"") == 1);
  CHECK(std::regex_search(svg, std::regex("d='M[0-9.]+,[0-9.]+ L")));
  try {
    harness::render_svg("plot $nothing using 1:2\n", 400, 300, "c4");
    FAIL("a script gnuplot refuses must throw");
  } catch (const harness::chart_error& e) {
    CHECK(std::string(e.what()).find("gnuplot failed") != std::string::npos);
  }
}
