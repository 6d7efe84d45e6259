// Where netserve was built without the XDP engine (netserve/CMakeLists.txt).
#include "netserve/server/xdp_engine.hpp"

#include <stdexcept>

namespace nb::serve {

struct xdp_engine::impl {};

bool xdp_engine::built_in() noexcept { return false; }

xdp_engine::xdp_engine(const xdp_options&) {
  throw std::runtime_error(
      "--engine xdp: this netserve was built without the XDP engine (it needs clang, bpftool and libbpf-dev at "
      "build time, and is never in the static build)");
}

xdp_engine::~xdp_engine() = default;
const std::string& xdp_engine::name() const noexcept {
  static const std::string none;
  return none;
}
const std::string& xdp_engine::interface() const noexcept { return name(); }
bool xdp_engine::pass() const noexcept { return false; }
void xdp_engine::add_flow(const endpoint&, std::uint16_t, std::uint32_t) {}
void xdp_engine::remove_flow(const endpoint&, std::uint16_t) noexcept {}
flow_totals xdp_engine::read_flow(const endpoint&, std::uint16_t) const { return {}; }

}  // namespace nb::serve
