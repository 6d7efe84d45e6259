#pragma once
// JSON text from outside the process (a peer's control frame, another host's netload output, a results
// file) is parsed with its nesting bounded while parsing. nlohmann parses and destroys a deep tree
// without recursion, but copies and dumps it recursively: a 200 000-deep array of 400 KB crashes the
// first copy. Nothing this suite writes nests deeper than 5 levels.
#include <nlohmann/json.hpp>

#include <string_view>

namespace nb {

inline constexpr int max_json_depth = 16;

// The value `text` holds; a discarded value (is_discarded()) when it is not JSON or nests deeper than
// `max_depth` levels of arrays and objects, and then `*too_deep`, when given, says whether the depth was the reason.
nlohmann::json parse_json_bounded(std::string_view text, int max_depth = max_json_depth, bool* too_deep = nullptr);

}  // namespace nb
