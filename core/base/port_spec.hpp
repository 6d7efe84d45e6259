#pragma once
// Port lists as in netserve's -p: "11256-11263,11300"; 0 (any free port) may repeat.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nb {

// Throws std::invalid_argument naming the bad part.
std::vector<std::uint16_t> parse_port_spec(std::string_view spec);
// A port other than 0 given twice is an error.
std::vector<std::uint16_t> parse_port_specs(const std::vector<std::string>& specs);

}  // namespace nb
