/* SPDX-License-Identifier: GPL-2.0 */
/* A flow's key and counters, shared by count.bpf.c and xdp_engine.cpp. Plain C for the BPF target. */
#ifndef NB_XDP_COUNT_MAPS_H
#define NB_XDP_COUNT_MAPS_H

#include <linux/types.h>

/* Slots of the per-CPU counter array, allocated up front on every CPU: room for a few tests of the most
   streams netserve allows. */
#define NB_XDP_MAX_FLOWS 4096
#define NB_PAYLOAD_HEADER_SIZE 16 /* core/wire/native/flow.hpp payload_header_size */
#define NB_XDP_INET 4
#define NB_XDP_INET6 6

struct nb_flow_key {
  __u8 family;
  __u8 pad[3];
  __be16 sport;
  __be16 dport;
  __u8 saddr[16]; /* IPv4: the first 4 bytes */
};

/* One CPU's share. Times CLOCK_MONOTONIC, read on a flow's first frame and on its first frame of each
   jiffy: last_ns is within a tick of the last frame. */
struct nb_flow_count {
  __u64 packets;
  __u64 bytes; /* UDP payload */
  __u64 sequenced;
  __u64 next_seq;
  __u64 out_of_order;
  __u64 gaps;
  __u64 first_ns;
  __u64 last_ns;
  __u64 last_jiffies;
  __u64 message_size; /* set by netserve: a frame carrying more is a batch */
};

/* Per CPU: the flow of the last frame and its slot, valid while flow_generation has not moved since. */
struct nb_last_flow {
  struct nb_flow_key key;
  __u32 slot;
  __u32 generation;
};

#endif
