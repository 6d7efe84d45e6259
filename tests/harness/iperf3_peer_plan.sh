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
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Read from /proc: a probe connection would be the one test an iperf3 -s -1 serves.
listening() {
  python3 - "$1" "$2" <<'PY'
import sys
import os
want = "0100007F:%04X" % int(sys.argv[1])
inodes = {l.split()[9] for l in list(open("/proc/net/tcp"))[1:] if l.split()[1] == want and l.split()[3] == "0A"}
try:  # the listener must be this server's own, not another test's that took the port first
    if open(f"/proc/{sys.argv[2]}/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
        sys.exit(2)
    mine = {os.readlink(f"/proc/{sys.argv[2]}/fd/{fd}") for fd in os.listdir(f"/proc/{sys.argv[2]}/fd")}
except OSError:
    sys.exit(2)  # the server is gone: it could not bind
sys.exit(0 if any(f"socket:[{i}]" in mine for i in inodes) else 1)
PY
}

# start_iperf3: an iperf3 -s -J -1 on a free port of 127.0.0.1, listening; sets $port. A port another
# test took between free_port and iperf3's bind: another port.
start_iperf3() {
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    "$iperf3" -s -J -1 -p "$port" -B 127.0.0.1 > "$tmp/iperf3-$port.json" 2> "$tmp/iperf3-$port.err" &
    pid=$!
    pids_to_clean="$pids_to_clean $pid"
    for _ in $(seq 50); do
      listening "$port" "$pid"
      case $? in 0) return 0 ;; 2) break ;; esac
      sleep 0.1
    done
    kill "$pid" 2>/dev/null
  done
  echo "FAIL: iperf3 -s did not listen"; exit 1
}
start_iperf3
p1=$port
start_iperf3
p2=$port

cat > "$tmp/p.toml" <<PLAN
name = "p"
[defaults]
duration = 1
warmup = 0
lead = 0.5
settle = 0.2
ports = [$p1, $p2]
[hosts]
device = { address = "127.0.0.1", peer = "iperf3" }
a = { address = "127.0.0.2" }
[[tests]]
name = "t"
message_size = 64
pps = 1000
topology = "fan-in"
server = "device"
clients = ["a", "a"]
PLAN

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
