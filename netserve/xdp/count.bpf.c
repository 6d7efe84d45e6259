// SPDX-License-Identifier: GPL-2.0
// netserve's XDP receive engine (netserve/server/xdp_engine.hpp): counts the datagrams of the flows netserve's
// control plane registered, at the driver, before the receiving host's stack can lose them, and drops them
// (or passes them on with pass_matched, so the socket path counts them too). Every other frame passes
// untouched: control connections, TCP data, ARP, other programs' traffic.
//
// A flow is (source address, source port, destination port) of one netload stream, the same attribution
// the socket engine makes. Its counters live in a per-CPU hash: each CPU writes its own copy without
// atomics, and netserve adds the copies up. Sequence numbers are netload's payload header (core/wire/native/flow.hpp:
// little-endian 64-bit sequence, then the send time) in datagrams of 16 bytes or more.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "netserve/xdp/count_maps.h"

// Set by netserve before loading: 1 passes counted datagrams on to the stack (--xdp-pass).
const volatile __u8 pass_matched = 0;

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, NB_XDP_MAX_FLOWS);
  // Entries come only from netserve (never from the program): no need to reserve 64 KiB flows' worth of
  // memory per CPU up front, which a kernel before 5.11 would charge to RLIMIT_MEMLOCK.
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct nb_flow_key);
  __type(value, struct nb_flow_count);
} flows SEC(".maps");

struct vlan_tag {
  __be16 tci;
  __be16 proto;
};

// The sequence analysis of core/wire/native/flow.hpp's recv_counters, per CPU, for `n` datagrams from `seq` on: a
// flow's datagrams normally arrive on one CPU (one RX queue), and netserve takes the highest next_seq over
// the CPUs. A flow that moves between CPUs can show a gap or an out-of-order arrival that is not one.
static __always_inline void count_sequence(struct nb_flow_count *c, __u64 seq, __u64 n) {
  if (seq >= c->next_seq) {
    if (seq > c->next_seq && c->sequenced > 0) c->gaps++;
    c->next_seq = seq + n;
  } else {
    c->out_of_order += n;
  }
  c->sequenced += n;
}

// Counts the datagram at `l4` if its flow is registered; returns the verdict. `l4_len` is what the IP
// header says follows it: a UDP length beyond that is a malformed datagram, left to the stack to refuse.
static __always_inline int count_udp(struct nb_flow_key *key, void *l4, __u32 l4_len, void *end) {
  struct udphdr *udp = l4;
  if ((void *)(udp + 1) > end || bpf_ntohs(udp->len) > l4_len) return XDP_PASS;
  key->sport = udp->source;
  key->dport = udp->dest;
  struct nb_flow_count *c = bpf_map_lookup_elem(&flows, key);
  if (!c) return XDP_PASS;
  __u64 now = bpf_ktime_get_ns();
  __u16 len = bpf_ntohs(udp->len);
  __u64 payload = len >= sizeof(*udp) ? len - sizeof(*udp) : 0;
  // Generic XDP runs after GRO, and a veth without gso_max_segs 1 passes a GSO buffer on whole: one frame
  // may then carry several datagrams of the test's size, the first one's header standing for them all.
  __u64 n = 1;
  if (c->message_size && payload > c->message_size) n = (payload + c->message_size - 1) / c->message_size;
  c->packets += n;
  c->bytes += payload;
  if (c->first_ns == 0) c->first_ns = now;
  c->last_ns = now;
  unsigned char *p = (unsigned char *)(udp + 1);
  if (payload >= NB_PAYLOAD_HEADER_SIZE && (void *)(p + 8) <= end) {
    __u64 seq;
    __builtin_memcpy(&seq, p, sizeof(seq));
    count_sequence(c, seq, n);  // little-endian on the wire, as on the hosts netserve runs on (x86, arm64)
  }
  return pass_matched ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int nb_count(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end;
  struct ethhdr *eth = data;
  if ((void *)(eth + 1) > end) return XDP_PASS;
  __be16 proto = eth->h_proto;
  void *l3 = eth + 1;
  if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {  // one VLAN tag
    struct vlan_tag *tag = l3;
    if ((void *)(tag + 1) > end) return XDP_PASS;
    proto = tag->proto;
    l3 = tag + 1;
  }
  struct nb_flow_key key = {};
  if (proto == bpf_htons(ETH_P_IP)) {
    struct iphdr *ip = l3;
    if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl < 5) return XDP_PASS;
    if (ip->frag_off & bpf_htons(0x3fff)) return XDP_PASS;  // a fragment: the stack reassembles, the socket counts
    key.family = NB_XDP_INET;
    __builtin_memcpy(key.saddr, &ip->saddr, 4);
    __u32 ip_len = bpf_ntohs(ip->tot_len), ihl = ip->ihl * 4;
    return count_udp(&key, (void *)ip + ihl, ip_len > ihl ? ip_len - ihl : 0, end);
  }
  if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr *ip6 = l3;
    // Extension headers are left to the stack: netload's datagrams carry none.
    if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP) return XDP_PASS;
    key.family = NB_XDP_INET6;
    __builtin_memcpy(key.saddr, &ip6->saddr, 16);
    return count_udp(&key, (void *)(ip6 + 1), bpf_ntohs(ip6->payload_len), end);
  }
  return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
