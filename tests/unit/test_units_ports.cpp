#include "core/base/port_spec.hpp"
#include "core/base/text.hpp"
#include "core/base/units.hpp"
#include "core/sys/endpoint.hpp"

#include <catch2/catch.hpp>

using namespace nb;

TEST_CASE("rates read k/M/G decimal suffixes as iperf and netperf do", "[units]") {
  CHECK(parse_rate("100m") == 100e6);
  CHECK(parse_rate("9G") == 9e9);
  CHECK(parse_rate("1.5k") == 1500);
  CHECK(parse_rate("250000") == 250000);
  CHECK_THROWS_AS(parse_rate(""), std::invalid_argument);
  CHECK_THROWS_AS(parse_rate("fast"), std::invalid_argument);
  CHECK_THROWS_AS(parse_rate("10x"), std::invalid_argument);
  CHECK_THROWS_AS(parse_rate("-5"), std::invalid_argument);
}

TEST_CASE("rate units of -f: k m g bits in powers of 1000, K M G bytes in powers of 1024", "[units]") {
  CHECK(nb::rate_units{'k'}.of(12.5e6) == Approx(12500));
  CHECK(nb::rate_units{'m'}.of(12.5e6) == Approx(12.5));
  CHECK(nb::rate_units{'g'}.of(12.5e9) == Approx(12.5));
  CHECK(nb::rate_units{'K'}.of(8 * 1024 * 3) == Approx(3));
  CHECK(nb::rate_units{'M'}.of(8.0 * (1 << 20)) == Approx(1));
  CHECK(nb::rate_units{'G'}.of(8.0 * (1 << 30)) == Approx(1));
  CHECK(std::string(nb::rate_units{'M'}.column()) == "MBytes/sec");
  CHECK(std::string(nb::rate_units{}.column()) == "10^6bits/sec");
  CHECK(nb::rate_units::valid('g'));
  CHECK_FALSE(nb::rate_units::valid('x'));
  CHECK_FALSE(nb::rate_units::valid(0));
}

TEST_CASE("sizes read K/M binary suffixes as netperf's -s/-S", "[units]") {
  CHECK(parse_size("128K") == 131072);
  CHECK(parse_size("4M") == 4 * 1024 * 1024);
  CHECK(parse_size("65507") == 65507);
  // format_size writes what parse_size reads back, in the largest whole unit.
  CHECK(format_size(65536) == "64K");
  CHECK(format_size(1u << 20) == "1M");
  CHECK(format_size(1536) == "1536");
  CHECK(format_size(1500) == "1500");
  CHECK(parse_size(format_size(3u << 20)) == 3u << 20);
  CHECK_THROWS_AS(parse_size("1.5"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size("12Q"), std::invalid_argument);
}

TEST_CASE("periods in h, m and s, as harness watch --every reads them", "[units]") {
  CHECK(parse_period("30s") == std::chrono::seconds(30));
  CHECK(parse_period("15m") == std::chrono::seconds(900));
  CHECK(parse_period("1h") == std::chrono::seconds(3600));
  CHECK(parse_period("2h30m") == std::chrono::seconds(9000));
  CHECK(parse_period("1h30m15s") == std::chrono::seconds(5415));
  CHECK(parse_period("90s") == std::chrono::seconds(90));
  CHECK(parse_period("744h") == std::chrono::seconds(744 * 3600));
  for (const char* bad :
       {"", "15", "m", "15x", "1m1h", "1h1h", "0s", "-5s", "1.5h", "5 s", "s5", "745h", "999999999h", "1h "})
    CHECK_THROWS_AS(parse_period(bad), std::invalid_argument);
  try {
    parse_period("15x");
  } catch (const std::invalid_argument& e) {
    CHECK(
        std::string(e.what()) ==
        "'15x' is not a period: 'x' is not a unit (a whole number and a unit, h, m or s, in that order: 30s, 15m, 1h, 2h30m)");
  }
  CHECK(format_period(std::chrono::seconds(9000)) == "2h30m");
  CHECK(format_period(std::chrono::seconds(2)) == "2s");
  CHECK(format_period(std::chrono::seconds(3601)) == "1h1s");
}

TEST_CASE("port specs: ranges - lists - repeats - any-port", "[ports]") {
  CHECK(parse_port_specs({"11256-11263"}).size() == 8);
  CHECK(parse_port_specs({"11256,11300"}) == std::vector<std::uint16_t>{11256, 11300});
  CHECK(parse_port_specs({"11256", "11300-11301"}) == std::vector<std::uint16_t>{11256, 11300, 11301});
  CHECK(parse_port_specs({"0,0"}) == std::vector<std::uint16_t>{0, 0});
  CHECK_THROWS_WITH(parse_port_specs({"11256", "11256"}), "port 11256 is given twice");
  CHECK_THROWS_WITH(parse_port_specs({"11263-11256"}), "bad port range '11263-11256'");
  CHECK_THROWS_WITH(parse_port_specs({"70000"}), "bad port '70000' in '70000'");
  CHECK_THROWS_AS(parse_port_specs({"a-b"}), std::invalid_argument);
  CHECK_THROWS_AS(parse_port_specs({"1,,2"}), std::invalid_argument);
  CHECK_THROWS_AS(parse_port_specs({}), std::invalid_argument);
}

TEST_CASE("endpoints parse - print and compare without DNS", "[endpoint]") {
  auto v4 = endpoint::parse("127.0.0.1:11256");
  CHECK(v4.to_string() == "127.0.0.1:11256");
  CHECK(v4.is_loopback());
  auto v6 = endpoint::parse("[::1]:80");
  CHECK(v6.to_string() == "[::1]:80");
  CHECK(v6.is_loopback());
  CHECK(endpoint::parse("198.18.0.1:5") == endpoint::from_numeric("198.18.0.1", 5));
  CHECK_FALSE(endpoint::parse("198.18.0.1:5") == endpoint::from_numeric("198.18.0.1", 6));
  CHECK_FALSE(endpoint::parse("198.18.0.1:5").is_loopback());
  CHECK_THROWS_AS(endpoint::parse("example.com:80"), std::invalid_argument);
  CHECK_THROWS_AS(endpoint::parse("1.2.3.4"), std::invalid_argument);
  CHECK_THROWS_AS(endpoint::parse("1.2.3.4:99999"), std::invalid_argument);
  for (const char* junk : {"1.2.3.4:24x", "1.2.3.4:+24", "1.2.3.4: 24", "1.2.3.4:", "1.2.3.4:-1"})
    CHECK_THROWS_WITH(endpoint::parse(junk), Catch::Contains("has a bad port"));
}

TEST_CASE("printable: C1 controls and bytes outside UTF-8 are escaped, other UTF-8 is kept") {
  CHECK(nb::printable("iperf \xc2\x9b"
                      "2J\x1b[1;1H") == "iperf \\u009b2J\\x1b[1;1H");
  CHECK(nb::printable("a\x9b"
                      "b") == "a\\x9bb");  // a lone CSI byte (8-bit terminals)
  CHECK(nb::printable("\xc2\xb5s \xe2\x86\x92 ok") == "\xc2\xb5s \xe2\x86\x92 ok");  // µ, →: kept
  CHECK(nb::printable("\xe2\x86") == "\\xe2\\x86");                                  // a character cut short
}
