/* SPDX-License-Identifier: GPL-2.0 */
/* What netserve's XDP program (count.bpf.c) and netserve (xdp_engine.cpp) share: a flow's key and its
 * counters, laid out the same for the BPF target and the host. Plain C: the BPF side is compiled by
 * clang as C. */
#ifndef NB_XDP_COUNT_MAPS_H
#define NB_XDP_COUNT_MAPS_H

#include <linux/types.h>

#define NB_XDP_MAX_FLOWS 65536
#define NB_PAYLOAD_HEADER_SIZE 16 /* core/wire/native/flow.hpp payload_header_size */
#define NB_XDP_INET 4
#define NB_XDP_INET6 6

struct nb_flow_key {
  __u8 family; /* NB_XDP_INET or NB_XDP_INET6 */
  __u8 pad[3];
  __be16 sport; /* network order, as on the wire */
  __be16 dport;
  __u8 saddr[16]; /* IPv4: the first 4 bytes */
};

/* One CPU's share of a flow's counts. Times are bpf_ktime_get_ns (CLOCK_MONOTONIC). */
struct nb_flow_count {
  __u64 packets;
  __u64 bytes; /* UDP payload bytes, as the socket engine counts */
  __u64 sequenced;
  __u64 next_seq; /* highest sequence number seen + 1 */
  __u64 out_of_order;
  __u64 gaps; /* sequence numbers skipped forward: a hole, lost or yet to come */
  __u64 first_ns;
  __u64 last_ns;
  __u64 message_size; /* the test's, set by netserve: a frame carrying more is a GRO or GSO batch */
};

#endif
