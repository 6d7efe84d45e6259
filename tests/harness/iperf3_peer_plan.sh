#!/bin/sh
# A plan whose server host has peer = "iperf3": the harness starts no netserve there, and its two netload
# instances (fan-in, 1 s, 1000 pps of 64 bytes each) drive two stock `iperf3 -s -J -1` on free ports of
# 127.0.0.1 with --peer iperf3. What summary.json says each instance received is exactly what its iperf3
# server's own JSON says it received; the host check says no netserve runs there.
# Arguments: harness, build folder. Exit 77 (skipped) when no iperf3 is installed.
set -u
harness=$1
build=$2
iperf3=${IPERF3_BIN:-/usr/bin/iperf3}
[ -x "$iperf3" ] || { echo "SKIP: no iperf3 at $iperf3 (Debian package iperf3)"; exit 77; }
tmp=$(mktemp -d /tmp/harness-iperf3-peer.XXXXXX)
pids_to_clean=""
trap 'for p in $pids_to_clean; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }
. "$(dirname "$0")/stock_peer_common.sh"
launch_iperf3() {
  "$iperf3" -s -J -1 -p "$1" -B 127.0.0.1 > "$tmp/iperf3-$1.json" 2> "$tmp/iperf3-$1.err" &
}
start_stock "iperf3 -s" launch_iperf3
p1=$port
start_stock "iperf3 -s" launch_iperf3
p2=$port

write_peer_plan iperf3

status=0
timeout 60 "$harness" run "$tmp/p.toml" --results "$tmp/results" --bin-dir "$build" > "$tmp/out" 2> "$tmp/err" || status=$?
cat "$tmp/out"
[ "$status" -eq 0 ] || { fail "harness run: exit status $status"; cat "$tmp/err"; }
for _ in $(seq 50); do [ -s "$tmp/iperf3-$p1.json" ] && [ -s "$tmp/iperf3-$p2.json" ] && break; sleep 0.1; done
dir=$(ls -d "$tmp"/results/p-* 2>/dev/null | head -n 1)
python3 - "$dir" "$tmp/iperf3-$p1.json" "$tmp/iperf3-$p2.json" <<'PY' || fail "summary.json and the iperf3 servers differ"
import json, sys
d = sys.argv[1]
summary = json.load(open(f"{d}/summary.json"))
env = json.load(open(f"{d}/environment.json"))
instances = summary["runs"][0]["instances"]
bad = 0
def check(what, a, b):
    global bad
    print(f"{what}: {a} vs {b}")
    bad |= a != b
check("instances", len(instances), 2)
for inst, path in zip(instances, sys.argv[2:]):
    s = json.load(open(path))
    check(f"{inst['instance']} ok", inst["ok"], True)
    # iperf3's "packets" is the highest count it saw, "lost_packets" the gaps below it.
    check(f"{inst['instance']} received packets = iperf3's end.sum_received packets - lost_packets", inst["receiver"]["packets"],
          s["end"]["sum_received"]["packets"] - s["end"]["sum_received"]["lost_packets"])
    check(f"{inst['instance']} sent = received + lost", inst["sender"]["packets"],
          inst["receiver"]["packets"] + inst["loss"]["packets"])
device = env["hosts"]["device"]
check("no netserve started on device", [c for c in device["commands"] if "netserve" in c], [])
check("the host check says so", any("starts no netserve here" in n for n in device["check"]["notes"]), True)
check("netload --peer iperf3", all("--peer iperf3" in c for c in env["hosts"]["a"]["commands"] if "--host-info" not in c), True)
sys.exit(bad)
PY
exit $fails
