// SPDX-License-Identifier: GPL-2.0
// A frame loop, the reference load where the kernel refuses live frames: seed frames circle between the two
// ends of a veth pair (lf_bounce: XDP_TX; lf_fanout: devmap broadcast), and each round sends copies out of the
// devices in `out` besides the loop's own. Every frame dies once live_frames sets `stop` or its links close.
#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

// Ethernet, IPv4 and UDP headers: where netload's payload header starts (core/wire/native/flow.hpp).
#define LF_SEQ_OFFSET (14 + 20 + 8)
#define LF_MAX_OUT 16

const volatile __u8 write_seq = 0;

volatile __u8 stop = 0;

// One CPU runs lf_fanout (its veth's NAPI thread pinned): a plain increment is exact.
__u64 next_seq = 0;

struct {
  __uint(type, BPF_MAP_TYPE_DEVMAP);
  __uint(max_entries, LF_MAX_OUT);
  __type(key, __u32);
  __type(value, __u32);
} out SEC(".maps");

SEC("xdp")
int lf_bounce(struct xdp_md *ctx) { return stop ? XDP_DROP : XDP_TX; }

SEC("xdp")
int lf_fanout(struct xdp_md *ctx) {
  if (stop) return XDP_DROP;
  if (write_seq) {
    unsigned char *p = (unsigned char *)(long)ctx->data + LF_SEQ_OFFSET;
    if ((void *)(p + 8) > (void *)(long)ctx->data_end) return XDP_DROP;
    __u64 seq = next_seq++;
    __builtin_memcpy(p, &seq, sizeof(seq));
  }
  return bpf_redirect_map(&out, 0, BPF_F_BROADCAST);
}

char LICENSE[] SEC("license") = "GPL";
