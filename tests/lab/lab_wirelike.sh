#!/usr/bin/env bash
# Lab test: the harness on the wire-like path (tests/lab/wirelike.sh: a veth pair cut to one datagram per
# frame, the receiver's stack steered to CPU 0, netserve pinned there, netload on CPU 1).
#  - unpaced -m 1 and -m 64: the senders overrun the receiver's CPU; every run's verdict must name the
#    receiver's CPU (receive livelock), not the path;
#  - a rate search at -m 64 with one and with two instances: the PDR (loss <= 0.5 %) must land within
#    10 % of the best rate whose loss the KERNEL's own counters put at <= 0.5 % (sender veth tx_packets
#    against the receiver's Udp InDatagrams; tests/lab/wirelike_truth.py), measured just before.
#   lab_wirelike.sh HARNESS NETSERVE NETLOAD
harness=$1 netserve=$2 netload=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/wirelike.sh"
wl_require
name=wlh
work=$(mktemp -d)
cleanup() {
  local rc=$?
  wl_down "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
wl_up "$name" 0 >/dev/null
eval "$(wl_info "$name")"  # WL_TX_NS, WL_RX_NS, WL_TX_ADDR, WL_RX_ADDR

# The kernel's answer first, while the path is otherwise idle: one and two senders, -m 64.
for n in 1 2; do
  timeout 300 python3 "$here/wirelike_truth.py" --netload "$netload" --netserve "$netserve" --name "$name" \
    -m 64 --senders "$n" -l 2 --thresholds 0.5 --max-trials 12 --json "$work/truth$n.json" >"$work/truth$n.txt" 2>&1 ||
    { tail -20 "$work/truth$n.txt"; echo "FAIL: the kernel-counter search with $n sender(s) failed"; exit 1; }
done

plan="$work/wirelike.toml"
cat >"$plan" <<TOML
name = "wirelike"
[defaults]
duration = 3
warmup = 0
lead = 0.5
settle = 0.5
skew_bound_ms = 50
ports = [0, 0]
[hosts]
rx = { address = "$WL_RX_ADDR", launcher = "netns", namespace = "$WL_RX_NS" }
tx1 = { address = "$WL_TX_ADDR", launcher = "netns", namespace = "$WL_TX_NS" }
tx2 = { address = "$WL_TX_ADDR", launcher = "netns", namespace = "$WL_TX_NS" }

[[tests]]
name = "unpaced"
kind = "UDP_STREAM"
message_size = [1, 64]
topology = "fan-in"
server = "rx"
clients = ["tx1"]
affinity = "1,0"

[[tests]]
name = "search1"
kind = "UDP_STREAM"
message_size = 64
topology = "fan-in"
server = "rx"
clients = ["tx1"]
affinity = "1,0"
search = { loss = [0.5], trial = 2, final = 4, precision = 2, max_trials = 12 }

[[tests]]
name = "search2"
kind = "UDP_STREAM"
message_size = 64
topology = "fan-in"
server = "rx"
clients = ["tx1", "tx2"]
affinity = "1,0"
search = { loss = [0.5], trial = 2, final = 4, precision = 2, max_trials = 12 }
TOML

timeout 600 "$harness" run "$plan" --results "$work/results" --no-live >"$work/console" 2>&1 ||
  { tail -30 "$work/console"; echo "FAIL: harness run failed"; exit 1; }

grep '^harness: search' "$work/console"
python3 - "$work" <<'PY'
import glob, json, sys
work = sys.argv[1]
res = glob.glob(f"{work}/results/*")[0]
summary = json.load(open(f"{res}/summary.json"))
ok = True
for run in summary["runs"]:
    if run.get("search_trial") or "search" in run or run["test"] != "unpaced":
        continue
    raw = json.load(open(glob.glob(f"{res}/raw/{run['run']}/01-*.json")[0]))["result"]
    v = raw.get("verdict") or {}
    print(f"{run['run']:14} sent {raw['sender']['pps']:9.0f} pps, received {raw['receiver']['pps']:9.0f} pps, "
          f"loss {raw['loss']['percent']:6.2f} %: {v.get('limit')}: {v.get('text')}")
    if v.get("limit") != "receiver-cpu":
        print("FAIL: an unpaced run on the wire-like path must say the receiver's CPU was the limit"); ok = False
for run in summary["runs"]:
    if "search" not in run:
        continue
    n = 1 if run["test"] == "search1" else 2
    truth = json.load(open(f"{work}/truth{n}.json"))
    best = truth["best"]["0.5"]["best_offered_pps"]
    pdr = run["search"]["results"][0]["rate_pps"]
    trials = len(run["search"]["trials"])
    print(f"{run['run']:14} {n} instance(s): PDR {pdr} pps in {trials} trials; kernel counters: best rate at <= 0.5 % "
          f"loss {best} pps")
    if pdr is None or best is None or abs(pdr / best - 1) > 0.10:
        print("FAIL: the PDR is not within 10 % of the kernel's best rate"); ok = False
sys.exit(0 if ok else 1)
PY
