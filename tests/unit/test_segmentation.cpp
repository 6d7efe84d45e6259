// The sender's choice between GSO buffers and datagram by datagram, from the route's device.
#include "core/data/segmentation.hpp"

#include <catch2/catch.hpp>

using namespace nb;

namespace {

egress_device veth(std::uint32_t gso_max_segs = 65535) {
  return {"veth0", "veth", "veth", false, true, gso_max_segs, ""};
}

}  // namespace

TEST_CASE("segmentation: a device that passes GSO buffers whole gets one datagram at a time") {
  const auto f = choose_segmentation(gso_mode::automatic, veth(), 1);
  CHECK(f.mode == "datagram");
  CHECK(f.automatic);
  CHECK_THAT(f.why, Catch::Contains("veth0 (veth) hands UDP GSO buffers whole") && Catch::Contains("64 datagrams"));
  egress_device tun{"tun0", "tun", "tun", false, true, 65535, ""};
  CHECK(choose_segmentation(gso_mode::automatic, tun, 1400).mode == "datagram");
  // A VM's virtio-net has no link kind, but with host USO it hands the buffer to the host.
  egress_device virtio{"ens3", "", "virtio_net", false, true, 65535, ""};
  CHECK(choose_segmentation(gso_mode::automatic, virtio, 64).mode == "datagram");
}

TEST_CASE("segmentation: GSO stays where the buffer is cut before anything beyond this host sees it") {
  SECTION("loopback") {
    egress_device lo{"lo", "", "", true, true, 65535, ""};
    const auto f = choose_segmentation(gso_mode::automatic, lo, 1);
    CHECK(f.mode == "gso");
    CHECK_THAT(f.why, Catch::Contains("through lo"));
  }
  SECTION("a device that offers no UDP segmentation: the kernel cuts in software") {
    egress_device d = veth();
    d.udp_segmentation = false;
    CHECK(choose_segmentation(gso_mode::automatic, d, 1).mode == "gso");
  }
  SECTION("gso_max_segs below the buffer's datagrams (the wire-like path's 1)") {
    const auto f = choose_segmentation(gso_mode::automatic, veth(1), 1);
    CHECK(f.mode == "gso");
    CHECK_THAT(f.why, Catch::Contains("veth0's gso_max_segs is 1"));
    CHECK(choose_segmentation(gso_mode::automatic, veth(64), 1).mode == "datagram");  // 64 of 64 pass whole
  }
  SECTION("a NIC that segments in hardware") {
    egress_device nic{"eth0", "", "mlx5_core", false, true, 65535, ""};
    const auto f = choose_segmentation(gso_mode::automatic, nic, 1400);
    CHECK(f.mode == "gso");
    CHECK_THAT(f.why, Catch::Contains("mlx5_core") && Catch::Contains("hardware"));
  }
}

TEST_CASE("segmentation: an unknown device, a datagram too large to batch, and the user's word") {
  egress_device unknown;
  unknown.error = "no route to 198.18.0.9: Object not found";
  const auto f = choose_segmentation(gso_mode::automatic, unknown, 1);
  CHECK(f.mode == "datagram");
  CHECK_THAT(f.why, Catch::StartsWith("no route to 198.18.0.9"));
  CHECK(choose_segmentation(gso_mode::automatic, veth(1), 40000).mode == "datagram");  // one per buffer
  const auto on = choose_segmentation(gso_mode::on, veth(), 1);
  CHECK((on.mode == "gso" && !on.automatic));
  const auto off = choose_segmentation(gso_mode::off, veth(1), 1);
  CHECK((off.mode == "datagram" && !off.automatic));
  CHECK(parse_gso_mode("auto") == gso_mode::automatic);
  CHECK_FALSE(parse_gso_mode("yes"));
  CHECK(segmentation_words(f).starts_with("datagram by datagram (automatic: no route"));
}

TEST_CASE("segmentation: the kernel's route to loopback leaves by lo, from any source") {
  for (const auto& source : {std::optional<endpoint>(), std::optional(endpoint::from_numeric("127.0.0.1", 0))}) {
    const egress_device d = egress_to(endpoint::from_numeric("127.0.0.1", 9), source);
    INFO(d.error);
    CHECK(d.error.empty());
    CHECK(d.name == "lo");
    CHECK(d.loopback);
    CHECK(choose_segmentation(gso_mode::automatic, d, 1).mode == "gso");
  }
}

TEST_CASE("segmentation: a sender that ran with sendmmsg went datagram by datagram, and says so") {
  segmentation_figures f{"gso", true, "the peer is reached through lo: no device lies between"};
  settle_segmentation(f, "gso");
  CHECK(f.mode == "gso");
  settle_segmentation(f, "sendmmsg");
  CHECK(f.mode == "datagram");
  CHECK_THAT(f.why, Catch::Contains("the kernel sent datagram by datagram all the same"));
}
