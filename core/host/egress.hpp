#pragma once
// The device the route to a peer leaves by, and whether it takes UDP GSO buffers whole: what the
// sender's segmentation choice rests on.
#include "core/sys/endpoint.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nb {

struct egress_device {
  std::string name;    // empty when the route could not be read
  std::string kind;    // rtnetlink's link kind; empty for a NIC's own driver
  std::string driver;  // ethtool's
  bool loopback = false;
  bool udp_segmentation = false;  // tx-udp-segmentation
  std::uint32_t gso_max_segs = 0;
  std::string error;  // why the device is unknown
};

// `source`: where the sender's socket is bound, for rules that route by source. Several next hops are an error.
egress_device egress_to(const endpoint& peer, const std::optional<endpoint>& source = std::nullopt);

}  // namespace nb
