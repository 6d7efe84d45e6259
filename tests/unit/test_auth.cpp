// The key check's building blocks against published vectors: SHA-256 (FIPS 180-4 examples, and every
// padding boundary), HMAC-SHA256 (RFC 4231), and the key file rules.
#include "core/auth.hpp"
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

TEST_CASE("SHA-256 matches FIPS 180-4 and every padding boundary", "[auth]") {
  CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(to_hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(to_hex(sha256(std::string(1'000'000, 'a'))) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // With its 9 bytes of padding, a message of 55 bytes fits one block, 56 to 119 take two, 120 three.
  CHECK(to_hex(sha256(std::string(55, 'x'))) == "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
  CHECK(to_hex(sha256(std::string(56, 'x'))) == "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
  CHECK(to_hex(sha256(std::string(63, 'x'))) == "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2");
  CHECK(to_hex(sha256(std::string(64, 'x'))) == "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
  CHECK(to_hex(sha256(std::string(119, 'x'))) == "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c");
  CHECK(to_hex(sha256(std::string(120, 'x'))) == "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98");
}

TEST_CASE("HMAC-SHA256 matches RFC 4231", "[auth]") {
  CHECK(to_hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(to_hex(hmac_sha256(std::string(20, '\xaa'), std::string(50, '\xdd'))) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  CHECK(to_hex(hmac_sha256(bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}),
                           std::string(50, '\xcd'))) ==
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // Keys longer than a block are hashed first.
  CHECK(to_hex(hmac_sha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(to_hex(hmac_sha256(std::string(131, '\xaa'),
                           "This is a test using a larger than block-size key and a larger than block-size data. "
                           "The key needs to be hashed before being used by the HMAC algorithm.")) ==
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST_CASE("challenges are fresh and answers depend on key and nonce", "[auth]") {
  std::string n1 = make_nonce(), n2 = make_nonce();
  CHECK(n1.size() == 64);
  CHECK(n1 != n2);
  CHECK(auth_answer("k", n1) == auth_answer("k", n1));
  CHECK(auth_answer("k", n1) != auth_answer("k", n2));
  CHECK(auth_answer("k", n1) != auth_answer("K", n1));
  // Pinned: a change to the context string or the encoding would make versions refuse each other.
  CHECK(auth_answer("k", std::string(64, '0')) == "ee001b19a6fa731deefbf3e77f2bf45cc3e6fb78a03bfce63743d3757a3023b4");
  CHECK(constant_time_equal("abc", "abc"));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "abcd"));
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
  CHECK_THROWS_WITH(read_psk_file(temp_file("\nkey on line two\n", 0600).path), Catch::Contains("the first line is empty"));
  CHECK_THROWS_WITH(read_psk_file("/nonexistent/netbench.key"), Catch::Contains("No such file"));
}
