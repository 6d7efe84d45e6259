#include "core/data/segmentation.hpp"

#include "core/data/udp_io.hpp"

#include <fmt/format.h>

namespace nb {

std::string_view to_string(gso_mode m) {
  switch (m) {
    case gso_mode::on: return "on";
    case gso_mode::off: return "off";
    case gso_mode::automatic: break;
  }
  return "auto";
}

std::optional<gso_mode> parse_gso_mode(std::string_view text) {
  for (gso_mode m : {gso_mode::automatic, gso_mode::on, gso_mode::off})
    if (to_string(m) == text) return m;
  return std::nullopt;
}

segmentation_figures choose_segmentation(gso_mode asked, const egress_device& d, std::size_t message_size) {
  if (asked == gso_mode::on) return {"gso", false, "as asked"};
  if (asked == gso_mode::off) return {"datagram", false, "as asked"};
  const std::size_t segments = gso_segments_for(message_size);
  if (segments < 2)
    return {"datagram", true, fmt::format("a GSO buffer holds one datagram of {} bytes: nothing to cut", message_size)};
  if (!d.error.empty()) return {"datagram", true, fmt::format("{}: a GSO buffer could cross the path whole", d.error)};
  if (d.loopback) return {"gso", true, fmt::format("the peer is reached through {}: no device lies between", d.name)};
  if (!d.udp_segmentation)
    return {"gso", true, fmt::format("{} offers no UDP segmentation: the kernel cuts each buffer before it", d.name)};
  if (d.gso_max_segs < segments)
    return {"gso", true,
            fmt::format("{}'s gso_max_segs is {}: the kernel cuts each buffer of {} before it", d.name, d.gso_max_segs,
                        segments)};
  // A NIC's own driver (no link kind) segments in hardware; virtio-net hands its buffers to the host.
  if (d.kind.empty() && d.driver != "virtio_net")
    return {"gso", true, fmt::format("{} ({}) cuts each buffer into datagrams in hardware", d.name, d.driver)};
  return {"datagram", true,
          fmt::format("{} ({}) hands UDP GSO buffers whole to what lies behind it, where up to {} datagrams "
                      "would count as one packet",
                      d.name, d.kind.empty() ? d.driver : d.kind, segments)};
}

segmentation_figures resolve_segmentation(gso_mode asked, const endpoint& peer, const std::optional<endpoint>& source,
                                          std::size_t message_size) {
  if (asked != gso_mode::automatic) return choose_segmentation(asked, {}, message_size);
  const bool bound = source && source->address() != "0.0.0.0" && source->address() != "::";
  return choose_segmentation(asked, egress_to(peer, bound ? source : std::nullopt), message_size);
}

void settle_segmentation(segmentation_figures& f, std::string_view batching) {
  if (f.mode != "gso" || batching.starts_with("gso")) return;
  f.mode = "datagram";
  f.why += "; the kernel sent datagram by datagram all the same (it has no UDP GSO, or the device refused it)";
}

std::string segmentation_words(const segmentation_figures& f) {
  return fmt::format("{} ({}{})", f.mode == "gso" ? "GSO buffers" : "datagram by datagram",
                     f.automatic ? "automatic: " : "", f.why);
}

}  // namespace nb
