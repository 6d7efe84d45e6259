#pragma once
// Where netserve counts forward UDP; parsed once at the edge so nothing further in compares strings.
#include <optional>
#include <string_view>

namespace nb {

enum class receive_engine { socket, xdp };

constexpr std::string_view to_string(receive_engine e) noexcept {
  switch (e) {
    case receive_engine::socket: return "socket";
    case receive_engine::xdp: return "xdp";
  }
  return "?";
}

constexpr std::optional<receive_engine> parse_receive_engine(std::string_view name) noexcept {
  if (name == "socket") return receive_engine::socket;
  if (name == "xdp") return receive_engine::xdp;
  return std::nullopt;
}

}  // namespace nb
