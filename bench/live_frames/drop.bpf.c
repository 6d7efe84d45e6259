// SPDX-License-Identifier: GPL-2.0
// The receive ceiling: a receiver that looks at nothing and drops every frame at the driver
// (ip link set dev DEV xdpdrv obj drop.bpf.o sec xdp).
#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

SEC("xdp")
int lf_drop(struct xdp_md *ctx) { return XDP_DROP; }

char LICENSE[] SEC("license") = "GPL";
