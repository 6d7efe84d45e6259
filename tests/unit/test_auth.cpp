// The key check's building blocks: HMAC-SHA256 (OpenSSL's) against RFC 4231, the handshake's values, the
// frame MACs (tamper, replay, reorder, reflection, other key), data tokens, and the key file rules.
#include "core/wire/native/auth.hpp"
#include "core/wire/native/protocol.hpp"
#include "tests/support/temp_file.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace nb;
using nb::test::temp_file;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

}  // namespace

TEST_CASE("HMAC-SHA256 matches RFC 4231", "[auth]") {
  CHECK(to_hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(to_hex(hmac_sha256(std::string(20, '\xaa'), std::string(50, '\xdd'))) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  CHECK(to_hex(hmac_sha256(
            bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}),
            std::string(50, '\xcd'))) == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // Keys longer than a block are hashed first.
  CHECK(to_hex(hmac_sha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(to_hex(hmac_sha256(std::string(131, '\xaa'),
                           "This is a test using a larger than block-size key and a larger than block-size data. "
                           "The key needs to be hashed before being used by the HMAC algorithm.")) ==
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST_CASE("challenges are fresh and the handshake's values depend on key, both nonces and role", "[auth]") {
  std::string n1 = make_nonce(), n2 = make_nonce();
  CHECK(n1.size() == 64);
  CHECK(is_nonce(n1));
  CHECK(n1 != n2);
  CHECK_FALSE(is_nonce(n1.substr(1)));
  CHECK_FALSE(is_nonce(std::string(63, '0') + "G"));
  CHECK(client_answer("k", n1, n2) == client_answer("k", n1, n2));
  CHECK(client_answer("k", n1, n2) != client_answer("k", n2, n2));  // the server's nonce counts
  CHECK(client_answer("k", n1, n2) != client_answer("k", n1, n1));  // and the client's
  CHECK(client_answer("k", n1, n2) != client_answer("K", n1, n2));
  // The server's confirm is no client answer, and the session key is neither.
  CHECK(server_answer("k", n1, n2) != client_answer("k", n1, n2));
  CHECK(to_hex(session_key("k", n1, n2)) != client_answer("k", n1, n2));
  CHECK(to_hex(session_key("k", n1, n2)) != server_answer("k", n1, n2));
  CHECK(session_key("k", n1, n2).size() == 32);
  // Pinned: a change to a label or the encoding would make versions refuse each other.
  const std::string z(64, '0'), o(64, '1');
  CHECK(client_answer("k", z, o) == to_hex(hmac_sha256("k", "netbench v3 client answer\n" + z + o)));
  CHECK(server_answer("k", z, o) == to_hex(hmac_sha256("k", "netbench v3 server answer\n" + z + o)));
  CHECK(constant_time_equal("abc", "abc"));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "abcd"));
}

namespace {

// Both ends of one connection after a handshake.
struct connection_macs {
  std::string ns = make_nonce(), nc = make_nonce();
  frame_mac client{session_key("k", ns, nc), frame_mac::role::client, ns + nc};
  frame_mac server{session_key("k", ns, nc), frame_mac::role::server, ns + nc};
};

}  // namespace

TEST_CASE("frame MACs refuse altered, replayed, reordered, reflected and foreign frames", "[auth]") {
  connection_macs c;
  CHECK(c.client.keyed());
  CHECK_FALSE(frame_mac{}.keyed());

  SECTION("in order, both ways") {
    for (int i = 0; i < 3; ++i) {
      std::string p = "request " + std::to_string(i);
      CHECK_NOTHROW(c.server.check(p, c.client.seal(p)));
      CHECK_NOTHROW(c.client.check(p, c.server.seal(p)));
    }
  }
  SECTION("altered payload or tag") {
    std::string tag = c.client.seal("dscp -1");
    CHECK_THROWS_WITH(c.server.check("dscp 46", tag), Catch::Contains("failed its authentication check"));
    tag[0] = static_cast<char>(tag[0] ^ 1);
    CHECK_THROWS_AS(c.server.check("dscp -1", tag), protocol_error);
    CHECK_THROWS_AS(c.server.check("dscp -1", ""), protocol_error);
  }
  SECTION("replayed") {
    std::string tag = c.client.seal("start");
    CHECK_NOTHROW(c.server.check("start", tag));
    CHECK_THROWS_AS(c.server.check("start", tag), protocol_error);
  }
  SECTION("reordered") {
    std::string t1 = c.server.seal("interval 1"), t2 = c.server.seal("interval 2");
    CHECK_THROWS_AS(c.client.check("interval 2", t2), protocol_error);
    CHECK_NOTHROW(c.client.check("interval 1", t1));  // a refused frame does not advance the count
    CHECK_NOTHROW(c.client.check("interval 2", t2));
  }
  SECTION("reflected back to its sender") {
    std::string tag = c.client.seal("end");
    CHECK_THROWS_AS(c.client.check("end", tag), protocol_error);
  }
  SECTION("from another connection (another session key)") {
    connection_macs other;
    CHECK_THROWS_AS(c.server.check("request", other.client.seal("request")), protocol_error);
  }
}

TEST_CASE("sealed frames: the tag is checked before the payload is parsed", "[auth]") {
  connection_macs c;
  const message m = start_msg{42};
  std::string frame = encode_frame(m, c.client);
  CHECK(frame.size() == encode_frame(m).size() + frame_mac::tag_size);
  CHECK(std::get<start_msg>(decode_frame_body(std::string_view(frame).substr(4), c.server)).start_wall_ns == 42);
  // The same frame again, a plain one, or one cut short: refused, whatever its payload says.
  CHECK_THROWS_WITH(decode_frame_body(std::string_view(frame).substr(4), c.server), Catch::Contains("authentication"));
  CHECK_THROWS_WITH(decode_frame_body(encode_payload(m), c.server), Catch::Contains("authentication"));
  CHECK_THROWS_WITH(decode_frame_body("{}", c.server), Catch::Contains("without its authentication tag"));
  // Not even parsed: JSON nested past the limit fails its MAC, not the parser.
  std::string deep = std::string(6000, '[') + std::string(6000, ']') + std::string(32, 'x');
  CHECK_THROWS_WITH(decode_frame_body(deep, c.server), Catch::Contains("authentication check"));
  // Unkeyed: the plain frame, as before.
  frame_mac plain;
  CHECK(encode_frame(m, plain) == encode_frame(m));
}

TEST_CASE("data tokens bind the test's key, the connection, the stream and the cookie", "[auth]") {
  connection_macs control, data, other_data;
  const std::string& k = control.client.key();
  std::string t = data_token(k, data.client, "cookie", 0);
  CHECK(t.size() == 64);
  CHECK(t == data_token(k, data.server, "cookie", 0));  // both ends compute the same
  CHECK(t != data_token(k, data.client, "cookie", 1));
  CHECK(t != data_token(k, data.client, "cookiE", 0));
  CHECK(t != data_token(k, other_data.client, "cookie", 0));                         // replayed on another connection
  CHECK(t != data_token(connection_macs{}.client.key(), data.client, "cookie", 0));  // another test's key
}

TEST_CASE("key files: first line - not for others - not empty", "[auth]") {
  CHECK(read_psk_file(temp_file("s3cret\nignored\n", 0600).path) == "s3cret");
  CHECK(read_psk_file(temp_file("crlf \t\r\n", 0400).path) == "crlf");
  CHECK(read_psk_file(temp_file("no line end", 0600).path) == "no line end");
  // Group read is how systemd's LoadCredential lets a dynamic user read its copy (ACL mask).
  CHECK(read_psk_file(temp_file("via acl\n", 0440).path) == "via acl");
  CHECK_THROWS_WITH(read_psk_file(temp_file("s3cret\n", 0644).path),
                    Catch::Contains("others may read or write it (mode 0644)"));
  CHECK_THROWS_WITH(read_psk_file(temp_file("s3cret\n", 0602).path), Catch::Contains("(mode 0602)"));
  CHECK_THROWS_WITH(read_psk_file(temp_file("\nkey on line two\n", 0600).path),
                    Catch::Contains("the first line is empty"));
  CHECK_THROWS_WITH(read_psk_file("/nonexistent/netbench.key"), Catch::Contains("No such file"));
}
