#pragma once
// The device the kernel's route to a peer leaves by, and what it does with a UDP GSO buffer: the facts
// the sender's segmentation choice rests on (core/wire/segmentation.hpp).
#include "core/sys/endpoint.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nb {

struct egress_device {
  std::string name;    // "veth0", "eth0"; empty when the route could not be read
  std::string kind;    // rtnetlink's link kind ("veth", "bridge", "tun", ...); empty for a NIC's own driver
  std::string driver;  // ethtool's driver name ("veth", "virtio_net", "mlx5_core"); empty when not given
  bool loopback = false;
  bool udp_segmentation = false;  // offers tx-udp-segmentation: the kernel hands it GSO buffers whole
  std::uint32_t gso_max_segs = 0;
  std::string error;  // why the device is unknown (no route, netlink refused); empty when known
};

// The device of the kernel's route from this network namespace to `peer`, from `source` when the sender's
// socket is bound to one (a wildcard address is none); an error where the route has several next hops.
egress_device egress_to(const endpoint& peer, const std::optional<endpoint>& source = std::nullopt);

}  // namespace nb
