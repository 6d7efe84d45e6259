#!/usr/bin/env bash
# Lab test: the harness on the wire-like path (tests/lab/wirelike.sh: a veth pair cut to one datagram per
# frame, the receiver's stack steered to CPU 0, netserve pinned there, netload on CPU 1).
#  - unpaced -m 1 and -m 64: the senders overrun the receiver's CPU; every run's verdict must name the
#    receiver's CPU (receive livelock), not the path;
#  - a rate search at -m 64 with one and with two instances: the PDR (loss <= 0.5 %) must land within
#    10 % of the best rate whose loss the KERNEL's own counters put at <= 0.5 % (sender veth tx_packets
#    against the receiver's Udp InDatagrams; tests/lab/wirelike_truth.py), measured just before. The
#    final trials last as long as the kernel search's trials (2 s), so both answer the same question:
#    near receive livelock a rate that holds for 2 s may tip over in 4.
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

# For one and then two senders: the kernel's answer, then the harness's search right after it, so both
# see the machine in the same state (the knee of receive livelock moves with whatever else runs).
plan_for() {  # N: the plan for N instances (with N = 1 also the unpaced runs)
  local n=$1 clients='["tx1"]'
  [[ $n -eq 2 ]] && clients='["tx1", "tx2"]'
  cat <<TOML
name = "wirelike$n"
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
name = "search$n"
kind = "UDP_STREAM"
message_size = 64
topology = "fan-in"
server = "rx"
clients = $clients
affinity = "1,0"
search = { loss = [0.5], trial = 2, final = 2, precision = 2, max_trials = 14 }
TOML
  [[ $n -eq 1 ]] && cat <<TOML

[[tests]]
name = "unpaced"
kind = "UDP_STREAM"
message_size = [1, 64]
topology = "fan-in"
server = "rx"
clients = ["tx1"]
affinity = "1,0"
TOML
  return 0
}
for n in 1 2; do
  timeout 300 python3 "$here/wirelike_truth.py" --netload "$netload" --netserve "$netserve" --name "$name" \
    -m 64 --senders "$n" -l 2 --thresholds 0.5 --max-trials 12 --json "$work/truth$n.json" >"$work/truth$n.txt" 2>&1 ||
    { tail -20 "$work/truth$n.txt"; echo "FAIL: the kernel-counter search with $n sender(s) failed"; exit 1; }
  plan_for "$n" >"$work/wirelike$n.toml"
  timeout 400 "$harness" run "$work/wirelike$n.toml" --results "$work/results" --no-live >>"$work/console" 2>&1 ||
    { tail -30 "$work/console"; echo "FAIL: harness run failed"; exit 1; }
done

grep '^harness: search' "$work/console"
python3 - "$work" <<'PY'
import glob, json, sys
work = sys.argv[1]
runs = []
for res in sorted(glob.glob(f"{work}/results/*")):
    runs += [(res, run) for run in json.load(open(f"{res}/summary.json"))["runs"]]
ok = True
for res, run in runs:
    if run.get("search_trial") or "search" in run or run["test"] != "unpaced":
        continue
    raw = json.load(open(glob.glob(f"{res}/raw/{run['run']}/01-*.json")[0]))["result"]
    v = raw.get("verdict") or {}
    print(f"{run['run']:14} sent {raw['sender']['pps']:9.0f} pps, received {raw['receiver']['pps']:9.0f} pps, "
          f"loss {raw['loss']['percent']:6.2f} %: {v.get('limit')}: {v.get('text')}")
    if v.get("limit") != "receiver-cpu":
        print("FAIL: an unpaced run on the wire-like path must say the receiver's CPU was the limit"); ok = False
for res, run in runs:
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
