#pragma once
// Whether a UDP sender hands the kernel GSO buffers or one datagram at a time. Behind a device that passes
// them whole (veth, tun, virtio-net) a router or counter sees one packet where the receiver counts up to 64.
#include "core/host/egress.hpp"
#include "core/result/result.hpp"

#include <optional>
#include <string_view>

namespace nb {

enum class gso_mode { automatic, on, off };

std::string_view to_string(gso_mode m);
std::optional<gso_mode> parse_gso_mode(std::string_view text);

// Automatic keeps GSO only where buffers are cut into datagrams before anything beyond this host sees them.
segmentation_figures choose_segmentation(gso_mode asked, const egress_device& egress, std::size_t message_size);

// The route's device to `peer`, then the choice.
segmentation_figures resolve_segmentation(gso_mode asked, const endpoint& peer, const std::optional<endpoint>& source,
                                          std::size_t message_size);

// A sender meant for GSO that ran with sendmmsg went datagram by datagram: the figure says so.
void settle_segmentation(segmentation_figures& f, std::string_view batching);

std::string segmentation_words(const segmentation_figures& f);

}  // namespace nb
