// SPDX-License-Identifier: GPL-2.0
// The live-frames reference sender: every run of this program turns one frame around (XDP_TX) on the
// device BPF_PROG_RUN names, after writing the next sequence number into netload's payload header.
#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

// Ethernet, IPv4 and UDP headers: where netload's payload header starts (core/wire/native/flow.hpp).
#define LF_SEQ_OFFSET (14 + 20 + 8)

// Set before loading: 0 for a payload shorter than the header.
const volatile __u8 write_seq = 0;

// One CPU runs the program: a plain increment is exact.
__u64 next_seq = 0;

SEC("xdp")
int lf_tx(struct xdp_md *ctx) {
  if (write_seq) {
    unsigned char *p = (unsigned char *)(long)ctx->data + LF_SEQ_OFFSET;
    if ((void *)(p + 8) > (void *)(long)ctx->data_end) return XDP_ABORTED;
    __u64 seq = next_seq++;
    __builtin_memcpy(p, &seq, sizeof(seq));  // little-endian, as netload writes it on x86 and arm64
  }
  return XDP_TX;
}

char LICENSE[] SEC("license") = "GPL";
