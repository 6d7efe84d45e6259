#!/usr/bin/env bash
# Lab test: what netload alone prints on the wire-like path (tests/lab/wirelike.sh: a veth pair cut to one
# datagram per frame, the receiver's stack steered to CPU 0, netserve pinned there, netload on CPU 1).
#  - The seed's PPS line, `netload -H … -t UDP_STREAM -l 300 -- -m 1` (3 s here): the unpaced sender
#    overdrives the receiver, the verdict names the receiver's side, and the line right under the
#    Packets/s figure says what that figure is (what an overdriven receiver kept, not the lossless rate,
#    and how to find that); the JSON says it in "receiver_note".
#  - TCP_STREAM across the path, both directions: the receiver is on another host as far as netload can
#    tell (the peer's address is not this namespace's), so the automatic receive mode discards, and the
#    table and the JSON say so. (One stream to this host copying is tests/integration/test_streams.cpp's.)
#   lab_seed_line.sh NETSERVE NETLOAD
[[ $# -eq 2 ]] || { echo "usage: lab_seed_line.sh NETSERVE NETLOAD" >&2; exit 2; }
netserve=$1 netload=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/wirelike.sh"
set +e
wl_require
[[ $(nproc) -ge 2 ]] || wl_skip "needs two CPUs (sender and receiver apart)"
name=wlseed
work=$(mktemp -d)
ns_pid=""
cleanup() {
  local rc=$?
  [[ -n $ns_pid ]] && kill "$ns_pid" 2>/dev/null
  wl_down "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
wl_up "$name" 0 >/dev/null
eval "$(wl_info "$name")"  # WL_TX_NS, WL_RX_NS, WL_TX_ADDR, WL_RX_ADDR
fail() { echo "FAIL: $*"; exit 1; }

ip netns exec "$WL_RX_NS" taskset -c 0 timeout 120 "$netserve" --bind "$WL_RX_ADDR" -p 0 >"$work/ns.out" 2>"$work/ns.err" &
ns_pid=$!
port=""
for _ in $(seq 100); do
  port=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["ports"][0])' "$work/ns.out" 2>/dev/null) && break
  sleep 0.05
done
[[ -n $port ]] || fail "netserve did not start: $(cat "$work/ns.err")"

load() {  # OUT ARGS...: netload in the sender's namespace, on CPU 1, bounded
  local out=$1; shift
  ip netns exec "$WL_TX_NS" taskset -c 1 timeout 30 "$netload" -H "$WL_RX_ADDR" -p "$port" "$@" >"$out" 2>"$out.err"
  local rc=$?
  [[ $rc -eq 0 ]] || fail "netload $* exited $rc: $(cat "$out.err")"
}

# The seed's line, its duration cut to 3 s.
load "$work/seed.txt" -t UDP_STREAM -l 3 -- -m 1
cat "$work/seed.txt"
limit=$(grep '^Limit' "$work/seed.txt")
[[ $limit =~ receiver\ CPU-bound|receiving\ socket\ overflow|dropped\ before\ the\ socket ]] ||
  fail "expected a receiver or socket limit from an unpaced -m 1 on this path, got: $limit"
meaning=$(grep -A1 '^Packets/s' "$work/seed.txt" | tail -n 1)
[[ $meaning == "Meaning     received "*" pps is what this receiver kept while overdriven ("*"run netload --search pdr with the same options to find it" ]] ||
  fail "the line under the Packets/s figure does not say what it means: '$meaning'"
received=$(awk '/^Packets\/s/ { print $5 }' "$work/seed.txt")
[[ $meaning == "Meaning     received $received pps"* ]] || fail "the meaning does not name the figure beside it ($received): '$meaning'"
echo "PASS: the seed line's figure says what it means: $meaning"

load "$work/seed.json" -t UDP_STREAM -l 3 --json -- -m 1
python3 - "$work/seed.json" <<'PY' || fail "the JSON's receiver_note"
import json, sys
r = json.load(open(sys.argv[1]))
v, note = r["verdict"]["limit"], r["receiver_note"]
print(f"JSON: verdict {v}; receiver_note: {note}")
assert v in ("receiver-cpu", "receiver-socket", "before-socket"), v
assert note.startswith(f"received {r['receiver']['pps']:.1f} pps is what this receiver kept while overdriven"), note
PY

for dir in forward reverse; do
  extra=()
  [[ $dir == reverse ]] && extra=(--reverse)
  load "$work/tcp_$dir.txt" -t TCP_STREAM -l 1 "${extra[@]}" -- -m 128K
  line=$(grep '^Receive ' "$work/tcp_$dir.txt")
  [[ $line == "Receive     discard (automatic: the receiver is on another host: the kernel discards, no copy)" ]] ||
    fail "TCP $dir across the path: '$line'"
  grep -q 'discarded in the kernel' "$work/tcp_$dir.txt" || fail "TCP $dir: the receiver did not discard: $(head -n 1 "$work/tcp_$dir.txt")"
  echo "PASS: TCP $dir across the path: $line"
done
