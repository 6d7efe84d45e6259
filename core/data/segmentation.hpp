#pragma once
// Whether a UDP sender hands the kernel GSO buffers (many datagrams, cut by the kernel or the device) or
// one datagram at a time, and why. A device that passes a GSO buffer whole to what lies behind it (veth,
// tun, a VM's virtio-net with host USO) lets a router, limiter or counter there see one packet where the
// receiver counts up to 64: there the sender goes datagram by datagram unless told otherwise.
#include "core/host/egress.hpp"
#include "core/result/result.hpp"

#include <optional>
#include <string_view>

namespace nb {

enum class gso_mode { automatic, on, off };

// "auto", "on", "off".
std::string_view to_string(gso_mode m);
std::optional<gso_mode> parse_gso_mode(std::string_view text);

// What runs: `asked` unless automatic; automatic keeps GSO only where the buffer is cut into datagrams
// before anything beyond this host can see it (loopback, software or hardware segmentation).
segmentation_figures choose_segmentation(gso_mode asked, const egress_device& egress, std::size_t message_size);

// Both together: the route's device to `peer` from `source` (the sender's bound address, if any), then
// the choice.
segmentation_figures resolve_segmentation(gso_mode asked, const endpoint& peer, const std::optional<endpoint>& source,
                                          std::size_t message_size);

// After the test: a sender that was to use GSO but ran with sendmmsg (`batching`: the kernel has no UDP GSO,
// or the device refused it) went datagram by datagram, and the figure says so.
void settle_segmentation(segmentation_figures& f, std::string_view batching);

// One line for the table: "datagram (automatic: veth0 (veth) hands ...)".
std::string segmentation_words(const segmentation_figures& f);

}  // namespace nb
