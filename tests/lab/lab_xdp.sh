#!/usr/bin/env bash
# Lab test: netserve's XDP receive engine (--engine xdp) on the wire-like path (tests/lab/wirelike.sh: veth
# cut to one datagram per frame, the receiver's stack steered to CPU 0; netserve pinned there, netload on 1).
#  1. exact counts at the driver: paced and unpaced (-m 1), netload's sent = netserve's received + lost, with
#     no loss, and the count equals the sender veth's tx_packets within 0.1 % (the control connection's few
#     TCP segments are the difference); the socket engine's figure under the same unpaced load is printed
#     beside it, and must be below the driver's (the ratio is graded by bench/run, not here);
#     two streams whose frames interleave on one CPU are counted as exactly;
#  2. --xdp-pass: the socket path counts the same datagrams too (socket_received);
#  3. --xdp-mode generic: "xdp-generic", exact counts;
#  4. crash safety: netserve killed with SIGKILL mid-test leaves no program on the interface, and the next
#     netserve starts; a leftover netlink attachment of netserve's program is detached by name at start;
#     another program's attachment is refused and left alone.
#   lab_xdp.sh NETSERVE NETLOAD BPF_OBJECT (netserve's compiled program, for the leftover case)
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: lab_xdp.sh NETSERVE NETLOAD BPF_OBJECT" >&2; exit 2; }
netserve=$1 netload=$2 bpf_object=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/wirelike.sh"
wl_require
[[ -f $bpf_object ]] || wl_skip "netserve was built without the XDP engine (no $bpf_object)"
command -v clang >/dev/null || wl_skip "clang is not installed (the foreign-program case compiles one)"
name=lxdp
work=$(mktemp -d)
server_pid=""
cleanup() {
  local rc=$?
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  wl_down "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
wl_up "$name" 0 >/dev/null
eval "$(wl_info "$name")"
rx() { ip netns exec "$WL_RX_NS" "$@"; }
tx() { ip netns exec "$WL_TX_NS" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }

start_server() {  # start_server [netserve options...]: sets server_pid and port
  # Not through rx(): a function run in the background is a subshell, and $! would not be netserve.
  ip netns exec "$WL_RX_NS" taskset -c 0 "$netserve" -p 0 -L "$WL_RX_ADDR" "$@" >"$work/ready" 2>"$work/server.err" &
  server_pid=$!
  for _ in $(seq 100); do [[ -s $work/ready ]] && break; sleep 0.05; done
  [[ -s $work/ready ]] || { cat "$work/server.err"; fail "netserve $* did not start"; }
  port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0])' "$work/ready")
}
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }
tx_packets() { wl_counters "$name" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sender_veth_tx_packets"])'; }
xdp_attached() { ip -n "$WL_RX_NS" -d link show "$WL_RX_DEV" | grep -q 'prog/xdp'; }

# load NAME SECONDS PPS SIZE: one UDP_STREAM to netserve (PPS 0: unpaced), its JSON result in NAME.json, the
# sender veth's tx_packets delta in NAME.tx
load() {  # load NAME SECONDS PPS SIZE [NETLOAD OPTIONS...]
  local n=$1 secs=$2 pps=$3 size=$4
  local before; before=$(tx_packets)
  local pace=(); [[ $pps -gt 0 ]] && pace=(--pps "$pps")
  tx taskset -c 1 "$netload" -H "$WL_RX_ADDR" -p "$port" -t UDP_STREAM -l "$secs" "${pace[@]}" "${@:5}" --json -- -m "$size" \
    >"$work/$n.json" 2>"$work/$n.err" || true  # a paced target missed on a busy machine still counts
  python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["ok"]' "$work/$n.json" 2>/dev/null ||
    { cat "$work/$n.err"; fail "netload ($n) failed"; }
  echo $(( $(tx_packets) - before )) >"$work/$n.tx"
}

# check NAME ENGINE [pass]: exact reconciliation, no loss, the driver's count against tx_packets
check() {
  python3 - "$work/$1.json" "$(cat "$work/$1.tx")" "$2" "${3:-drop}" <<'PY'
import json, sys
r, tx, engine, mode = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3], sys.argv[4]
name = sys.argv[1].rsplit("/", 1)[1]
assert r["ok"], r["error"]
sent, got, lost = r["sender"]["packets"], r["receiver"]["packets"], r["loss"]["packets"]
assert r["receive_engine"] == engine, f"{name}: receive_engine {r['receive_engine']}, want {engine}"
assert sent == got + lost and r["loss"]["reconciles"], f"{name}: sent {sent} != received {got} + lost {lost}"
assert lost == 0, f"{name}: {lost} of {sent} lost between a sender and a driver on one veth"
off = (tx - got) / got
assert 0 <= off <= 0.001, f"{name}: the driver counted {got}, the sender's veth sent {tx} ({off:.4%} apart)"
if r["message_size"] >= 16:
    assert r["seq_gaps"] == 0, f"{name}: {r['seq_gaps']} gaps in the sequence of a run without loss"
socket = r["socket_received"]["packets"]
if mode == "pass":  # the socket path saw what the program passed on (at 100 kpps it drops none to speak of)
    assert socket >= got * 0.99, f"{name}: socket path counted {socket} of {got}"
else:
    assert socket == 0, f"{name}: {socket} datagrams reached the socket past a dropping program"
print(f"ok: {name}: {engine}, sent {sent} = received {got} + lost {lost}; veth tx_packets {tx} (+{tx - got}); "
      f"socket path {socket}; {r['receiver']['pps']:.0f} pps")
PY
}

# 1. exact counts, native, dropping; the socket engine under the same unpaced load
start_server --engine xdp --interface "$WL_RX_DEV"
grep -q '"receive_engine":"xdp-native"' "$work/ready" || fail "native XDP on veth expected: $(cat "$work/ready")"
load paced 2 200000 64
check paced xdp-native
load unpaced 1 0 1
check unpaced xdp-native
stop_server
start_server
load socket 1 0 1
stop_server
python3 - "$work/unpaced.json" "$work/socket.json" <<'PY'
import json, sys
x, s = (json.load(open(f)) for f in sys.argv[1:])
assert s["receive_engine"] == "socket", s["receive_engine"]
ratio = x["receiver"]["pps"] / max(s["receiver"]["pps"], 1)
print(f"ok: unpaced -m 1: driver {x['receiver']['pps']:.0f} pps, socket engine {s['receiver']['pps']:.0f} pps "
      f"({ratio:.1f}x; the sender offered {x['sender']['pps']:.0f} and {s['sender']['pps']:.0f})")
assert ratio > 1, "the driver counted no more than the socket path received"
PY

# 1b. two streams through the one receive queue: their frames interleave on one CPU, each flow counted exactly
start_server --engine xdp --interface "$WL_RX_DEV"
load streams 2 200000 64 --streams 2
check streams xdp-native
stop_server

# 2. --xdp-pass: both count
start_server --engine xdp --interface "$WL_RX_DEV" --xdp-pass
load pass 2 100000 64
check pass xdp-native pass
stop_server

# 3. generic XDP
start_server --engine xdp --interface "$WL_RX_DEV" --xdp-mode generic
grep -q '"receive_engine":"xdp-generic"' "$work/ready" || fail "--xdp-mode generic: $(cat "$work/ready")"
load generic 2 200000 64
check generic xdp-generic
# 3b. GSO buffers whole through the veth (gso_max_segs back to its default; --gso, since netload would send
# datagram by datagram there): generic XDP then sees one frame per buffer of up to 64 datagrams, and must
# count each datagram in it, not the frame
ip -n "$WL_TX_NS" link set dev "$WL_TX_DEV" gso_max_segs 65535
load batches 1 0 64 --gso
ip -n "$WL_TX_NS" link set dev "$WL_TX_DEV" gso_max_segs 1
python3 - "$work/batches.json" "$(cat "$work/batches.tx")" <<'PY'
import json, sys
r, frames = json.load(open(sys.argv[1])), int(sys.argv[2])
sent, got = r["sender"]["packets"], r["receiver"]["packets"]
assert r["ok"] and r["receive_engine"] == "xdp-generic", r
assert r["socket_received"]["packets"] == 0, f"the program passed {r['socket_received']['packets']} on to the socket"
assert sent == got and r["loss"]["packets"] == 0 and r["seq_gaps"] == 0, \
    f"GSO batches: sent {sent}, counted {got}, lost {r['loss']['packets']}, gaps {r['seq_gaps']}"
assert frames < sent / 4, f"the veth carried {frames} frames for {sent} datagrams: the buffers were cut after all"
print(f"ok: batches.json: xdp-generic, {sent} datagrams in {frames} frames (GSO buffers whole), all counted")
PY
stop_server

# 4a. SIGKILL mid-test: the kernel detaches the link with the process
start_server --engine xdp --interface "$WL_RX_DEV"
tx taskset -c 1 "$netload" -H "$WL_RX_ADDR" -p "$port" -t UDP_STREAM -l 3 -- -m 64 >/dev/null 2>&1 &
load_pid=$!
sleep 1
kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
for _ in $(seq 40); do xdp_attached || break; sleep 0.05; done
xdp_attached && fail "an XDP program is still attached after netserve was killed: $(ip -n "$WL_RX_NS" -d link show "$WL_RX_DEV")"
wait "$load_pid" 2>/dev/null || true
start_server --engine xdp --interface "$WL_RX_DEV"
stop_server
xdp_attached && fail "an XDP program is still attached after netserve stopped"
echo "ok: killed with SIGKILL mid-test: nothing left attached; a new netserve starts and leaves nothing either"

# 4b. a leftover netlink attachment of netserve's own program (what a kernel before XDP links leaves): ip
# loads the object itself, which needs an iproute2 built with libbpf
if ! ip -V | grep -q libbpf; then
  echo "ok (4b and 4c skipped): this iproute2 has no libbpf to load an XDP object with"; exit 0
fi
ip -n "$WL_RX_NS" link set dev "$WL_RX_DEV" xdpdrv obj "$bpf_object" sec xdp
xdp_attached || fail "could not attach the leftover program by netlink"
start_server --engine xdp --interface "$WL_RX_DEV"
grep -q "detached a leftover XDP counter" "$work/server.err" || fail "no leftover detached: $(cat "$work/server.err")"
load leftover 1 100000 64
check leftover xdp-native
stop_server
xdp_attached && fail "the program is still attached after the leftover case"
echo "ok: a leftover attachment of netserve's program is detached at start"

# 4c. someone else's program: refused, and left in place
cat >"$work/other.c" <<'C'
#include <linux/bpf.h>
__attribute__((section("xdp"), used)) int other_pass(struct xdp_md *ctx) { return XDP_PASS; }
char LICENSE[] __attribute__((section("license"), used)) = "GPL";
C
clang -O2 -target bpf -I/usr/include/"$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)" -c "$work/other.c" -o "$work/other.o"
ip -n "$WL_RX_NS" link set dev "$WL_RX_DEV" xdpgeneric obj "$work/other.o" sec xdp
set +e
rx "$netserve" -p 0 -L "$WL_RX_ADDR" --engine xdp --interface "$WL_RX_DEV" >/dev/null 2>"$work/other.err"
status=$?
set -e
[[ $status -eq 1 ]] && grep -q "XDP program 'other_pass'.*already attached" "$work/other.err" ||
  fail "another program's attachment: status $status, $(cat "$work/other.err")"
ip -n "$WL_RX_NS" -d link show "$WL_RX_DEV" | grep -q 'name other_pass' || fail "the other program was removed"
ip -n "$WL_RX_NS" link set dev "$WL_RX_DEV" xdpgeneric off
echo "ok: another program's attachment is refused in one line and left alone: $(cat "$work/other.err")"
