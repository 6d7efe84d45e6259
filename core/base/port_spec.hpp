#pragma once
// Port lists as netserve's -p and a plan's `ports` give them: "11256-11263", "11256,11300", "0" (any free
// port); ranges and single ports mixed, order kept, 0 may repeat. The one parser of them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nb {

// One list. Throws std::invalid_argument naming the bad part.
std::vector<std::uint16_t> parse_port_spec(std::string_view spec);
// Several lists (repeated -p), joined; a port other than 0 given twice is an error.
std::vector<std::uint16_t> parse_port_specs(const std::vector<std::string>& specs);

}  // namespace nb
