#!/usr/bin/env bash
# bench/xdp_receive.sh — the XDP receiver's ceiling against netserve --engine xdp (root).
#   bench/xdp_receive.sh [--bin-dir build/default] [--seconds 5] [-m 18] [--sender live|loop] [--json FILE]
# 1. Per-frame cost of each program by BPF_PROG_RUN (bench/live_frames/xdp_cost): netserve's counter with one
#    registered flow against the drop-only program, and that the counter counted every run.
# 2. One veth pair between two namespaces this script creates (tests/lab/wirelike.sh, 198.18.0.0/15), the same
#    load from CPU 1 into each receiver in turn, the receiving veth's NAPI threaded and pinned to CPU 0 (netserve
#    there too): the drop-only program (the ceiling), then netserve counting a flow netload registered (netload
#    sends 100 pps on it; the load goes as netload's stream). The load is bench/live_frames: live frames, or
#    where the kernel refuses them (or --sender loop) its frame loop on a second veth pair. Counts reconcile when
#    netserve's received = the veth's XDP drops, and lies between the driver's accepted and that + netload's sent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/default seconds=5 size=18 json_out="" sender=live
while [[ $# -gt 0 ]]; do
  case $1 in
    --bin-dir) bin=$(cd "$2" && pwd); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    -m) size=$2; shift 2 ;;
    --sender) sender=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    *) echo "usage: bench/xdp_receive.sh [--bin-dir DIR] [--seconds N] [-m SIZE] [--sender live|loop] [--json FILE]" >&2
       exit 2 ;;
  esac
done
source "$root/tests/lab/wirelike.sh"
wl_require
lf=$bin/bench/live_frames/live_frames drop_obj=$bin/bench/live_frames/bpf/drop.bpf.o
count_obj=$bin/netserve/bpf/count.bpf.o cost=$bin/bench/live_frames/xdp_cost
for f in "$lf" "$drop_obj" "$count_obj" "$cost" "$bin/netserve/netserve" "$bin/netload/netload"; do
  [[ -e $f ]] || wl_skip "$f is missing (cmake --build --preset default --target live_frames xdp_cost netserve netload)"
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
# The frame loop's pair, inside the sender's namespace
ip -n "$WL_TX_NS" link del xr-lp0 2>/dev/null || true  # left by a run killed before its cleanup
ip -n "$WL_TX_NS" link add xr-lp0 numtxqueues 1 numrxqueues 1 type veth peer name xr-lp1 numtxqueues 1 numrxqueues 1
ip -n "$WL_TX_NS" link set xr-lp0 up
ip -n "$WL_TX_NS" link set xr-lp1 up

stat() { ip netns exec "$1" ethtool -S "$2" | awk -v n="$3:" '$1 == n {print $2}'; }  # NS DEV NAME
rx_drops() { stat "$WL_RX_NS" "$WL_RX_DEV" rx_queue_0_xdp_drops; }
napi_pids() { ps -e -o pid=,comm= | awk -v d="napi/$WL_RX_DEV-" 'index($2, d) == 1 {print $1}'; }
napi_ns() { local t=0 p; for p in $(napi_pids); do t=$((t + $(cut -d' ' -f1 "/proc/$p/schedstat"))); done; echo $t; }

# The receiving veth's NAPI in its own thread on CPU 0, as a second host's would be (once XDP is attached).
pin_napi() {
  ip netns exec "$WL_RX_NS" sh -c "echo 1 > /sys/class/net/$WL_RX_DEV/threaded"
  local pids; pids=$(napi_pids)
  [[ -n $pids ]] || { echo "no napi/$WL_RX_DEV-* thread after threaded=1" >&2; exit 1; }
  for p in $pids; do taskset -p -c 0 "$p" >/dev/null; done
}

# send NAME SPORT DPORT: the load from CPU 1; NAME.json (live_frames), NAME.rx (XDP drops), NAME.cpu (NAPI ns)
send() {
  local rc=0 drops cpu mode=()
  [[ $sender == loop ]] && mode=(--loop xr-lp0 xr-lp1)
  drops=$(rx_drops) cpu=$(napi_ns)
  ip netns exec "$WL_TX_NS" taskset -c 1 "$lf" -i "$WL_TX_DEV" --dst-mac "$rx_mac" --src-ip "$WL_TX_ADDR" \
    --dst-ip "$WL_RX_ADDR" --sport "$2" --dport "$3" -m "$size" -s "$seconds" "${mode[@]}" \
    >"$work/$1.json" 2>"$work/$1.err" || rc=$?
  if [[ $rc -eq 3 && $sender == live ]]; then
    echo "live frames refused, the frame loop instead: $(cat "$work/$1.err")"
    sender=loop
    send "$@"
    return
  fi
  [[ $rc -eq 0 ]] || { cat "$work/$1.err" >&2; exit 1; }
  echo $(( $(napi_ns) - cpu )) >"$work/$1.cpu"
  sleep 0.2  # what the ring holds reaches the counter
  echo $(( $(rx_drops) - drops )) >"$work/$1.rx"
}

# Phase 1: drop-only
ip -n "$WL_RX_NS" link set dev "$WL_RX_DEV" xdpdrv obj "$drop_obj" sec xdp
pin_napi
send drop 40000 40001
ip -n "$WL_RX_NS" link set dev "$WL_RX_DEV" xdpdrv off

# Phase 2: netserve --engine xdp on CPU 0, a flow registered by netload at 100 pps
ip netns exec "$WL_RX_NS" taskset -c 0 "$bin/netserve/netserve" -p 0 -L "$WL_RX_ADDR" --engine xdp \
  --interface "$WL_RX_DEV" >"$work/ready" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do [[ -s $work/ready ]] && break; sleep 0.05; done
[[ -s $work/ready ]] || { cat "$work/server.err"; echo "netserve did not start" >&2; exit 1; }
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0])' "$work/ready")
pin_napi
all_before=$(rx_drops)
ip netns exec "$WL_TX_NS" taskset -c 1 "$bin/netload/netload" -H "$WL_RX_ADDR" -p "$port" -t UDP_STREAM \
  -l "$(python3 -c "print(int($seconds) + 4)")" --pps 100 --json -- -m "$size" >"$work/netload.json" 2>"$work/netload.err" &
load_pid=$!
sport=""
for _ in $(seq 100); do
  sport=$(ip netns exec "$WL_TX_NS" ss -Hun state established "dst $WL_RX_ADDR" | awk '{n = split($3, a, ":"); print a[n]; exit}')
  [[ -n $sport ]] && break
  sleep 0.05
done
[[ -n $sport ]] || { cat "$work/netload.err"; echo "netload's stream socket did not appear" >&2; exit 1; }
sleep 1
send count "$sport" "$port"
wait "$load_pid" || true
load_pid=""
echo $(( $(rx_drops) - all_before )) >"$work/all.rx"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""

python3 - "$work" "$seconds" "$size" "$sender" "$json_out" <<'PY'
import json, os, sys
work, seconds, size, sender, out = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
rd = lambda n: json.load(open(os.path.join(work, n)))
num = lambda n: int(open(os.path.join(work, n)).read())
drop, count, load = rd("drop.json"), rd("count.json"), rd("netload.json")
netload_sent, received = load["sender"]["packets"], load["receiver"]["packets"]
phases = {}
for name, j in (("drop-only", drop), ("netserve xdp", count)):
    key = "drop" if name == "drop-only" else "count"
    got, cpu = num(f"{key}.rx"), num(f"{key}.cpu")
    phases[name] = {"sent": j, "xdp_drops": got, "napi_cpu_ns": cpu, "pps": got / j["seconds"],
                    "ns_per_frame": cpu / max(got, 1), "cpu_busy": cpu / 1e9 / j["seconds"]}
d, c = phases["drop-only"], phases["netserve xdp"]
all_rx = num("all.rx")
# Every frame netserve's program dropped was counted, and every frame the driver accepted was counted; netload's
# own frames may meet a full ring on their way, so they bound the rest.
reconciles = received == all_rx and count["accepted"] <= received <= count["accepted"] + netload_sent
print(f"XDP receive, -m {size}, {seconds:g} s each, sender {sender} on CPU 1, receiving NAPI on CPU 0 (netserve too)")
for name, p in phases.items():
    s = p["sent"]
    print(f"  {name:13} offered {s['offered_pps']/1e6:.2f} Mpps, received {p['pps']/1e6:.2f} Mpps (accepted {s['accepted']}, "
          f"refused {s['refused']}); NAPI thread {p['ns_per_frame']:.0f} ns a frame, busy {p['cpu_busy']:.0%}")
print(f"  netserve / drop-only: received {c['pps'] / d['pps']:.2f}, per-frame ceiling (NAPI ns) "
      f"{d['ns_per_frame'] / c['ns_per_frame']:.2f}")
print(f"  counts reconcile: {'yes' if reconciles else 'NO'}: netserve received {received} = veth XDP drops {all_rx}; "
      f"the driver accepted {count['accepted']} of the load, netload sent {netload_sent}")
if out:
    json.dump({"sender": sender, "phases": phases, "netload_sent": netload_sent, "netserve_received": received,
               "xdp_drops": all_rx, "reconciles": reconciles}, open(out, "w"))
sys.exit(0 if reconciles else 1)
PY
