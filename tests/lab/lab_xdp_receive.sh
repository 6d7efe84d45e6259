#!/usr/bin/env bash
# Lab test: the XDP receiver bench (bench/xdp_receive.sh) in one short run. Its first part, netserve's counter
# run by BPF_PROG_RUN, must count every run; its second, the same load into the drop-only program and into
# netserve --engine xdp (live frames, or the frame loop where the kernel refuses them), must reconcile:
# netserve's received = the veth's XDP drops, every frame the driver accepted counted. Rates are not graded.
#   lab_xdp_receive.sh BIN_DIR
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: lab_xdp_receive.sh BIN_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
[[ $(id -u) -eq 0 ]] || { echo "SKIP: BPF_PROG_RUN and namespaces need root"; exit 77; }
[[ -x $1/bench/live_frames/xdp_cost ]] || { echo "SKIP: built without the XDP tools (clang, bpftool, libbpf)"; exit 77; }
exec "$here/../../bench/xdp_receive.sh" --bin-dir "$1" --seconds 1
