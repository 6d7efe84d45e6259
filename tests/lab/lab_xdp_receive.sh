#!/usr/bin/env bash
# Lab test: netserve's counter under BPF_PROG_RUN, a flow removed and added again: not counted once removed
# (each CPU's remembered flow goes stale), then counted in its new slot alone. Then bench/xdp_receive.sh for
# 1 s a phase: the counter counts every run; the same load into the drop-only program and into netserve
# --engine xdp (live frames, or the frame loop) reconciles with the veth's XDP drops. Rates are not graded.
#   lab_xdp_receive.sh BIN_DIR
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: lab_xdp_receive.sh BIN_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
[[ $(id -u) -eq 0 ]] || { echo "SKIP: BPF_PROG_RUN and namespaces need root"; exit 77; }
[[ -x $1/bench/live_frames/xdp_cost ]] || { echo "SKIP: built without the XDP tools (clang, bpftool, libbpf)"; exit 77; }
"$1/bench/live_frames/xdp_cost" --reuse "$1/netserve/bpf/count.bpf.o" || { echo "FAIL: flow removed and added again"; exit 1; }
echo "ok: a flow removed and added again: not counted once removed, then in its new slot alone"
exec "$here/../../bench/xdp_receive.sh" --bin-dir "$1" --seconds 1
