#pragma once
// JSON from outside the process, its nesting bounded while parsing: nlohmann copies and dumps a tree
// recursively, so a deep one from a peer would crash the first copy.
#include <nlohmann/json.hpp>

#include <string_view>

namespace nb {

inline constexpr int max_json_depth = 16;

// A discarded value when `text` is not JSON or nests deeper; `*too_deep` says whether depth was why.
nlohmann::json parse_json_bounded(std::string_view text, int max_depth = max_json_depth, bool* too_deep = nullptr);

}  // namespace nb
