// Names without glibc's NSS (the static programs): a hosts(5) reader and the numeric-then-hosts resolver.
// Addresses are loopback, RFC 2544 benchmarking space (198.18.0.0/15) and IPv6 documentation space.
#include "core/sys/endpoint.hpp"
#include "tests/support/temp_file.hpp"

#include <catch2/catch.hpp>

using nb::endpoint;
using nb::test::temp_file;

namespace {

const char* const hosts_text =
    "# a comment line naming 198.18.0.99 commented\n"
    "127.0.0.1\tlocalhost\n"
    "\n"
    "   \t\n"
    "2001:db8::1   dual   # v6 before v4 for the same name\n"
    "198.18.0.1  dual Dual-Alias\n"
    "198.18.0.2 peer-a  peer-b\t peer-c # peer-d is in a comment\n"
    "999.1.1.1   broken\n"
    "[::1]       broken\n"
    "not-an-address broken\n"
    "198.18.0.3  broken\n"
    "198.18.0.4\n"
    "198.18.0.5  crlf\r\n"
    "198.18.0.6 peer-a\n";

std::string found(const std::string& path, std::string_view name, int family = AF_UNSPEC) {
  auto e = endpoint::from_hosts_file(name, 11256, family, path);
  return e ? e->to_string() : "none";
}

}  // namespace

TEST_CASE("hosts file: canonical names and aliases, any case, blanks and comments", "[endpoint][hosts]") {
  temp_file hosts(hosts_text, 0644);
  CHECK(found(hosts.path, "localhost") == "127.0.0.1:11256");
  CHECK(found(hosts.path, "peer-a") == "198.18.0.2:11256");  // the first line that names it
  CHECK(found(hosts.path, "peer-b") == "198.18.0.2:11256");
  CHECK(found(hosts.path, "peer-c") == "198.18.0.2:11256");
  CHECK(found(hosts.path, "PEER-C") == "198.18.0.2:11256");
  CHECK(found(hosts.path, "dual-alias") == "198.18.0.1:11256");
  CHECK(found(hosts.path, "crlf") == "198.18.0.5:11256");
  CHECK(found(hosts.path, "peer-d") == "none");     // after '#'
  CHECK(found(hosts.path, "commented") == "none");  // a comment line
  CHECK(found(hosts.path, "peer") == "none");       // whole names only
  CHECK(found(hosts.path, "peer-a ") == "none");
  CHECK(found(hosts.path, "") == "none");
  CHECK(found(hosts.path, "198.18.0.4") == "none");  // an address is not a name of itself
}

TEST_CASE("hosts file: the family asked for, in file order, and bad lines name nothing", "[endpoint][hosts]") {
  temp_file hosts(hosts_text, 0644);
  CHECK(found(hosts.path, "dual") == "[2001:db8::1]:11256");
  CHECK(found(hosts.path, "dual", AF_INET6) == "[2001:db8::1]:11256");
  CHECK(found(hosts.path, "dual", AF_INET) == "198.18.0.1:11256");
  CHECK(found(hosts.path, "localhost", AF_INET6) == "none");
  CHECK(found(hosts.path, "broken") == "198.18.0.3:11256");  // past 999.1.1.1, [::1] and a name
}

TEST_CASE("hosts file: missing or empty files name nothing", "[endpoint][hosts]") {
  CHECK(found("/nonexistent/netbench/hosts", "localhost") == "none");
  temp_file empty("", 0644);
  CHECK(found(empty.path, "localhost") == "none");
}

TEST_CASE("resolving without NSS: numeric, then the hosts file, else one line that says so", "[endpoint][hosts]") {
  temp_file hosts(hosts_text, 0644);
  auto resolve = [&](const std::string& host, int family = AF_UNSPEC) {
    return endpoint::resolve_without_nss(host, 5001, family, hosts.path).to_string();
  };
  CHECK(resolve("127.0.0.1") == "127.0.0.1:5001");
  CHECK(resolve("::1") == "[::1]:5001");
  CHECK(resolve("peer-b") == "198.18.0.2:5001");
  CHECK(resolve("dual", AF_INET) == "198.18.0.1:5001");
  CHECK_THROWS_WITH(resolve("::1", AF_INET), "cannot resolve '::1': not an IPv4 address");
  CHECK_THROWS_WITH(resolve("example.invalid"), "cannot resolve 'example.invalid': the static build reads only " +
                                                    hosts.path + "; give a numeric address");
  CHECK_THROWS_AS(resolve("example.invalid"), std::runtime_error);
}
