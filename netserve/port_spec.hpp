#pragma once
// netserve's -p: "11256-11263", "11256,11300", "0" (any free port), repeated -p; order kept, 0 may repeat.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nb::serve {

// Throws std::invalid_argument naming the bad part.
std::vector<std::uint16_t> parse_port_spec(std::string_view spec);
std::vector<std::uint16_t> parse_port_specs(const std::vector<std::string>& specs);

}  // namespace nb::serve
