// JSON from outside is refused past 16 levels while it is parsed: nlohmann copies and dumps a tree
// recursively, and a 200 000-deep array (400 KB) overflowed the stack on its first copy.
#include "core/json/json_text.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace {

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("json text: 16 levels parse, 17 are refused as too deep", "[json]") {
  bool too_deep = true;
  CHECK_FALSE(nb::parse_json_bounded(nested(16), nb::max_json_depth, &too_deep).is_discarded());
  CHECK_FALSE(too_deep);
  CHECK(nb::parse_json_bounded(nested(17), nb::max_json_depth, &too_deep).is_discarded());
  CHECK(too_deep);
  CHECK(nb::parse_json_bounded(R"({"a":{"b":)" + nested(15) + "}}", nb::max_json_depth, &too_deep).is_discarded());
  CHECK(too_deep);
}

TEST_CASE("json text: a 200 000-deep array is refused, and what is returned copies safely", "[json]") {
  bool too_deep = false;
  const nlohmann::json j = nb::parse_json_bounded(nested(200'000), nb::max_json_depth, &too_deep);
  CHECK(too_deep);
  const nlohmann::json copy = j;  // the copy that overflowed the stack when the tree was built
  CHECK(copy.is_discarded());
}

TEST_CASE("json text: text that is not JSON is discarded, not too deep", "[json]") {
  bool too_deep = true;
  CHECK(nb::parse_json_bounded("{\"a\":", nb::max_json_depth, &too_deep).is_discarded());
  CHECK_FALSE(too_deep);
  CHECK(nb::parse_json_bounded("").is_discarded());
  CHECK(nb::parse_json_bounded(R"({"type":"armed"})").value("type", "") == "armed");
}
