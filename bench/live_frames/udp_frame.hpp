#pragma once
// The one UDP over IPv4 frame the bench tools send or run: Ethernet addresses are the caller's.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lf {

inline std::uint16_t ipv4_checksum(const iphdr& ip) {
  std::uint32_t sum = 0;
  const auto* w = reinterpret_cast<const std::uint16_t*>(&ip);
  for (std::size_t i = 0; i < sizeof(ip) / 2; ++i) sum += w[i];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

// `payload` zero bytes; the UDP checksum 0 (none, as IPv4 allows). Addresses in network order.
inline std::vector<unsigned char> udp4_frame(in_addr_t saddr, in_addr_t daddr, std::uint16_t sport, std::uint16_t dport,
                                             std::size_t payload) {
  std::vector<unsigned char> f(sizeof(ethhdr) + sizeof(iphdr) + sizeof(udphdr) + payload, 0);
  auto* eth = reinterpret_cast<ethhdr*>(f.data());
  eth->h_proto = htons(ETH_P_IP);
  auto* ip = reinterpret_cast<iphdr*>(eth + 1);
  ip->version = 4;
  ip->ihl = 5;
  ip->ttl = 64;
  ip->protocol = IPPROTO_UDP;
  ip->tot_len = htons(static_cast<std::uint16_t>(sizeof(iphdr) + sizeof(udphdr) + payload));
  ip->saddr = saddr;
  ip->daddr = daddr;
  ip->check = ipv4_checksum(*ip);
  auto* udp = reinterpret_cast<udphdr*>(ip + 1);
  udp->source = htons(sport);
  udp->dest = htons(dport);
  udp->len = htons(static_cast<std::uint16_t>(sizeof(udphdr) + payload));
  return f;
}

}  // namespace lf
