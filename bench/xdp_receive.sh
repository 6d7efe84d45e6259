#!/usr/bin/env bash
# bench/xdp_receive.sh — the XDP receiver's ceiling against netserve --engine xdp (root).
#   bench/xdp_receive.sh [--bin-dir build/default] [--seconds 5] [-m 18] [--json FILE]
# 1. Per-frame cost of each program by BPF_PROG_RUN (bench/live_frames/xdp_cost): netserve's counter with one
#    registered flow against the drop-only program, and that the counter counted every run.
# 2. One veth pair between two namespaces this script creates (tests/lab/wirelike.sh, 198.18.0.0/15), the
#    same live-frames load (bench/live_frames, CPU 1) into each receiver in turn, the receiving veth's NAPI
#    threaded and pinned to CPU 0 (netserve there too): the drop-only program (the ceiling), then netserve
#    counting a flow netload registered (netload sends 100 pps on it; live_frames sends as netload's stream).
#    Counts reconcile when live_frames' accepted + netload's sent = netserve's received = the veth's XDP drops.
# Exit 0 when the counts reconcile; a kernel that refuses live frames ends the run after part 1 (exit 77).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/default seconds=5 size=18 json_out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --bin-dir) bin=$(cd "$2" && pwd); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    -m) size=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    *) echo "usage: bench/xdp_receive.sh [--bin-dir DIR] [--seconds N] [-m SIZE] [--json FILE]" >&2; exit 2 ;;
  esac
done
source "$root/tests/lab/wirelike.sh"
wl_require
lf=$bin/bench/live_frames/live_frames drop_obj=$bin/bench/live_frames/bpf/drop.bpf.o
count_obj=$bin/netserve/bpf/count.bpf.o cost=$bin/bench/live_frames/xdp_cost
for f in "$lf" "$drop_obj" "$count_obj" "$cost" "$bin/netserve/netserve" "$bin/netload/netload"; do
  [[ -e $f ]] || wl_skip "$f is missing (cmake --build --preset default --target live_frames netserve netload)"
done
ip -V | grep -q libbpf || wl_skip "this iproute2 cannot load an XDP object (no libbpf)"
# Part 1: no device, no frames sent
python3 - "$("$cost" -m "$size" "$count_obj")" "$("$cost" -m "$size" "$drop_obj")" <<'PY'
import json, sys
count, drop = (json.loads(a) for a in sys.argv[1:])
exact = count["counted"] == count["runs"] and count["retval"] == 1  # XDP_DROP
print(f"per-frame cost (BPF_PROG_RUN, {count['runs']} runs, hot cache): netserve's counter {count['ns_per_frame']} ns, "
      f"drop-only {drop['ns_per_frame']} ns; counted {count['counted']} of {count['runs']}"
      f"{'' if exact else ' - NOT EXACT'}")
sys.exit(0 if exact else 1)
PY

name=nbxdprecv work=$(mktemp -d) server_pid="" load_pid=""
cleanup() {
  local rc=$?
  [[ -n $load_pid ]] && kill "$load_pid" 2>/dev/null
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  wl_down "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
wl_up "$name" 0 >/dev/null
eval "$(wl_info "$name")"
rx_mac=$(wl_mac "$WL_RX_NS" "$WL_RX_DEV")

# stat NS DEV NAME: one ethtool -S counter
stat() { ip netns exec "$1" ethtool -S "$2" | awk -v n="$3:" '$1 == n {print $2}'; }
rx_drops() { stat "$WL_RX_NS" "$WL_RX_DEV" rx_queue_0_xdp_drops; }

# The receiving veth's NAPI in its own thread on CPU 0, as a second host's would be (once XDP is attached).
pin_napi() {
  ip netns exec "$WL_RX_NS" sh -c "echo 1 > /sys/class/net/$WL_RX_DEV/threaded"
  local pids; pids=$(ps -e -o pid=,comm= | awk -v d="napi/$WL_RX_DEV-" 'index($2, d) == 1 {print $1}')
  [[ -n $pids ]] || { echo "no napi/$WL_RX_DEV-* thread after threaded=1" >&2; exit 1; }
  for p in $pids; do taskset -p -c 0 "$p" >/dev/null; done
}

send() {  # send NAME SPORT DPORT: live_frames from CPU 1, its JSON in NAME.json; a refusal ends the run (77)
  local rc=0
  ip netns exec "$WL_TX_NS" taskset -c 1 "$lf" -i "$WL_TX_DEV" --dst-mac "$rx_mac" --src-ip "$WL_TX_ADDR" \
    --dst-ip "$WL_RX_ADDR" --sport "$2" --dport "$3" -m "$size" -s "$seconds" >"$work/$1.json" 2>"$work/$1.err" || rc=$?
  [[ $rc -eq 3 ]] && { echo "SKIP (part 2): $(cat "$work/$1.err")"; exit 77; }
  [[ $rc -eq 0 ]] || { cat "$work/$1.err" >&2; exit 1; }
}

# Phase 1: drop-only
ip -n "$WL_RX_NS" link set dev "$WL_RX_DEV" xdpdrv obj "$drop_obj" sec xdp
pin_napi
before=$(rx_drops)
send drop 40000 40001
echo $(( $(rx_drops) - before )) >"$work/drop.rx"
ip -n "$WL_RX_NS" link set dev "$WL_RX_DEV" xdpdrv off

# Phase 2: netserve --engine xdp on CPU 0, a flow registered by netload at 100 pps
ip netns exec "$WL_RX_NS" taskset -c 0 "$bin/netserve/netserve" -p 0 -L "$WL_RX_ADDR" --engine xdp \
  --interface "$WL_RX_DEV" >"$work/ready" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do [[ -s $work/ready ]] && break; sleep 0.05; done
[[ -s $work/ready ]] || { cat "$work/server.err"; echo "netserve did not start" >&2; exit 1; }
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0])' "$work/ready")
pin_napi
before=$(rx_drops)
ip netns exec "$WL_TX_NS" taskset -c 1 "$bin/netload/netload" -H "$WL_RX_ADDR" -p "$port" -t UDP_STREAM \
  -l "$(python3 -c "print(int($seconds) + 4)")" --pps 100 --json -- -m "$size" >"$work/netload.json" 2>"$work/netload.err" &
load_pid=$!
sport=""
for _ in $(seq 100); do
  sport=$(ip netns exec "$WL_TX_NS" ss -Hun state established "dst $WL_RX_ADDR" | awk '{split($4, a, ":"); print a[2]; exit}')
  [[ -n $sport ]] && break
  sleep 0.05
done
[[ -n $sport ]] || { cat "$work/netload.err"; echo "netload's stream socket did not appear" >&2; exit 1; }
sleep 1
send count "$sport" "$port"
wait "$load_pid" || true
load_pid=""
echo $(( $(rx_drops) - before )) >"$work/count.rx"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""

python3 - "$work" "$seconds" "$size" "$json_out" <<'PY'
import json, os, sys
work, seconds, size, out = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rd = lambda n: json.load(open(os.path.join(work, n)))
drop, count, load = rd("drop.json"), rd("count.json"), rd("netload.json")
drop_rx, count_rx = (int(open(os.path.join(work, n)).read()) for n in ("drop.rx", "count.rx"))
netload_sent = load["sender"]["packets"]
received = load["receiver"]["packets"]
counted_lf = received - netload_sent  # netserve's count of live_frames' frames
ceiling = drop_rx / drop["seconds"]
rate = counted_lf / count["seconds"]
reconciles = count["accepted"] + netload_sent == received == count_rx
print(f"XDP receive, -m {size}, {seconds:g} s each, sender live_frames on CPU 1, receiver NAPI + netserve on CPU 0")
print(f"  drop-only:        offered {drop['offered_pps']/1e6:.2f} Mpps, received {ceiling/1e6:.2f} Mpps "
      f"(accepted {drop['accepted']}, refused {drop['refused']}, veth XDP drops {drop_rx})")
print(f"  netserve xdp:     offered {count['offered_pps']/1e6:.2f} Mpps, received {rate/1e6:.2f} Mpps "
      f"(accepted {count['accepted']}, refused {count['refused']}; netload sent {netload_sent})")
print(f"  ratio netserve / drop-only: {rate / ceiling:.2f}")
print(f"  counts reconcile: {'yes' if reconciles else 'NO'}: live_frames accepted {count['accepted']} + netload sent "
      f"{netload_sent} = {count['accepted'] + netload_sent}; netserve received {received}; veth XDP drops {count_rx}")
if out:
    json.dump({"drop": drop, "drop_rx": drop_rx, "count": count, "count_rx": count_rx, "netload_sent": netload_sent,
               "netserve_received": received, "ceiling_pps": ceiling, "netserve_pps": rate,
               "ratio": rate / ceiling, "reconciles": reconciles}, open(out, "w"))
sys.exit(0 if reconciles else 1)
PY
