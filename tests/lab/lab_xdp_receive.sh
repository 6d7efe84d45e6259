#!/usr/bin/env bash
# Lab test: the XDP receiver bench (bench/xdp_receive.sh) in one short run. Its first part, netserve's
# counter run by BPF_PROG_RUN, must count every run exactly; its second, where the kernel allows live
# frames, must reconcile live_frames' accepted + netload's sent = netserve's received = the veth's XDP drops.
# A kernel that refuses live frames passes on the first part, saying so.
#   lab_xdp_receive.sh BIN_DIR
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: lab_xdp_receive.sh BIN_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
[[ $(id -u) -eq 0 ]] || { echo "SKIP: BPF_PROG_RUN and namespaces need root"; exit 77; }
[[ -x $1/bench/live_frames/xdp_cost ]] || { echo "SKIP: built without the XDP tools (clang, bpftool, libbpf)"; exit 77; }
set +e
"$here/../../bench/xdp_receive.sh" --bin-dir "$1" --seconds 1
rc=$?
set -e
[[ $rc -eq 77 ]] && { echo "ok: the counter counted every run; the live-frames part could not run here"; exit 0; }
exit $rc
