// SPDX-License-Identifier: GPL-2.0
// netserve's XDP engine: counts the datagrams of the flows netserve registered, per CPU, and drops them (or
// passes them on); every other frame passes untouched. docs/netserve.md#xdp-engine
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "netserve/xdp/count_maps.h"

// --xdp-pass, set before loading.
const volatile __u8 pass_matched = 0;
// Set before loading: 0 on a kernel without bpf_jiffies64 (before 5.5), which then reads the clock per frame.
const volatile __u8 has_jiffies = 1;

// A registered flow's slot in `counts`: looked up when a CPU's frames change flow (`last` caches it).
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, NB_XDP_MAX_FLOWS);
  __type(key, struct nb_flow_key);
  __type(value, __u32);
} flows SEC(".maps");

// Each CPU writes its own copy without atomics; netserve adds the copies up.
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, NB_XDP_MAX_FLOWS);
  __type(key, __u32);
  __type(value, struct nb_flow_count);
} counts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct nb_last_flow);
} last SEC(".maps");

// Moved by netserve after it removes a flow: every CPU's `last` is stale then.
volatile __u32 flow_generation = 0;

struct vlan_tag {
  __be16 tci;
  __be16 proto;
};

// recv_counters' sequence analysis (core/wire/native/flow.hpp), per CPU, for `n` datagrams from `seq` on.
static __always_inline void count_sequence(struct nb_flow_count *c, __u64 seq, __u64 n) {
  if (seq >= c->next_seq) {
    if (seq > c->next_seq && c->sequenced > 0) c->gaps++;
    c->next_seq = seq + n;
  } else {
    c->out_of_order += n;
  }
  c->sequenced += n;
}

static __always_inline int same_key(const struct nb_flow_key *a, const struct nb_flow_key *b) {
  const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
  return x[0] == y[0] && x[1] == y[1] && x[2] == y[2];
}

// The flow's counters on this CPU: the hash only when this CPU's previous frame was of another flow.
static __always_inline struct nb_flow_count *counts_of(const struct nb_flow_key *key) {
  __u32 zero = 0;
  struct nb_last_flow *l = bpf_map_lookup_elem(&last, &zero);
  if (!l) return 0;
  __u32 generation = flow_generation;
  if (l->generation != generation || !same_key(&l->key, key)) {
    __u32 *slot = bpf_map_lookup_elem(&flows, key);
    if (!slot) return 0;
    l->key = *key;
    l->slot = *slot;
    l->generation = generation;
  }
  return bpf_map_lookup_elem(&counts, &l->slot);
}

// A clock read per frame would cost more than the rest of the counting: jiffies are a load.
static __always_inline void stamp(struct nb_flow_count *c) {
  if (has_jiffies) {
    __u64 j = bpf_jiffies64();
    if (j == c->last_jiffies && c->first_ns != 0) return;
    c->last_jiffies = j;
  }
  c->last_ns = bpf_ktime_get_ns();
  if (c->first_ns == 0) c->first_ns = c->last_ns;
}

// `l4_len`: what the IP header says follows; a UDP length beyond it is left to the stack to refuse.
static __always_inline int count_udp(struct nb_flow_key *key, void *l4, __u32 l4_len, void *end) {
  struct udphdr *udp = l4;
  if ((void *)(udp + 1) > end || bpf_ntohs(udp->len) > l4_len) return XDP_PASS;
  key->sport = udp->source;
  key->dport = udp->dest;
  struct nb_flow_count *c = counts_of(key);
  if (!c) return XDP_PASS;
  __u16 len = bpf_ntohs(udp->len);
  __u64 payload = len >= sizeof(*udp) ? len - sizeof(*udp) : 0;
  // A GRO or GSO buffer passed whole carries several of the test's datagrams, under the first one's header.
  __u64 n = 1;
  if (c->message_size && payload > c->message_size) n = (payload + c->message_size - 1) / c->message_size;
  c->packets += n;
  c->bytes += payload;
  stamp(c);
  unsigned char *p = (unsigned char *)(udp + 1);
  if (payload >= NB_PAYLOAD_HEADER_SIZE && (void *)(p + 8) <= end) {
    __u64 seq;
    __builtin_memcpy(&seq, p, sizeof(seq));
    count_sequence(c, seq, n);  // little-endian on the wire, as on x86 and arm64
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
  struct nb_flow_key key __attribute__((aligned(8))) = {};  // same_key reads it by 8 bytes
  if (proto == bpf_htons(ETH_P_IP)) {
    struct iphdr *ip = l3;
    if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl < 5) return XDP_PASS;
    if (ip->frag_off & bpf_htons(0x3fff)) return XDP_PASS;  // a fragment: the socket counts it
    key.family = NB_XDP_INET;
    __builtin_memcpy(key.saddr, &ip->saddr, 4);
    __u32 ip_len = bpf_ntohs(ip->tot_len), ihl = ip->ihl * 4;
    return count_udp(&key, (void *)ip + ihl, ip_len > ihl ? ip_len - ihl : 0, end);
  }
  if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr *ip6 = l3;
    // netload's datagrams carry no extension headers.
    if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP) return XDP_PASS;
    key.family = NB_XDP_INET6;
    __builtin_memcpy(key.saddr, &ip6->saddr, 16);
    return count_udp(&key, (void *)(ip6 + 1), bpf_ntohs(ip6->payload_len), end);
  }
  return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
