#include "core/base/port_spec.hpp"

#include "core/base/whole_number.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace nb {
namespace {

std::uint16_t parse_port(std::string_view text, std::string_view spec) {
  const auto port = parse_whole<std::uint16_t>(text);
  if (!port) throw std::invalid_argument(fmt::format("bad port '{}' in '{}'", text, spec));
  return *port;
}

}  // namespace

std::vector<std::uint16_t> parse_port_spec(std::string_view spec) {
  std::vector<std::uint16_t> ports;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    auto comma = std::min(spec.find(',', pos), spec.size());
    std::string_view item = spec.substr(pos, comma - pos);
    if (auto dash = item.find('-'); dash != std::string_view::npos) {
      auto lo = parse_port(item.substr(0, dash), spec), hi = parse_port(item.substr(dash + 1), spec);
      if (lo == 0 || hi < lo) throw std::invalid_argument(fmt::format("bad port range '{}'", item));
      for (unsigned p = lo; p <= hi; ++p) ports.push_back(static_cast<std::uint16_t>(p));
    } else {
      ports.push_back(parse_port(item, spec));
    }
    pos = comma + 1;
  }
  return ports;
}

std::vector<std::uint16_t> parse_port_specs(const std::vector<std::string>& specs) {
  std::vector<std::uint16_t> all;
  for (const auto& s : specs) {
    auto ports = parse_port_spec(s);
    all.insert(all.end(), ports.begin(), ports.end());
  }
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i] != 0 && std::count(all.begin(), all.end(), all[i]) > 1)
      throw std::invalid_argument(fmt::format("port {} is given twice", all[i]));
  if (all.empty()) throw std::invalid_argument("no port given");
  return all;
}

}  // namespace nb
