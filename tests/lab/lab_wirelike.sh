#!/usr/bin/env bash
# Lab test: the harness on the wire-like path (tests/lab/wirelike.sh: a veth pair cut to one datagram per
# frame, the receiver's stack steered to CPU 0, netserve pinned there, netload on CPU 1).
#  - unpaced -m 1 and -m 64: the senders overrun the receiver's CPU; every run's verdict must name the
#    receiver's CPU (receive livelock), not the path. A wrong verdict is a defect, never noise.
#  - a rate search at -m 64 with one and with two instances, beside the best rate whose loss the KERNEL's
#    own counters put at <= 0.5 % (sender veth tx_packets against the receiver's Udp InDatagrams;
#    tests/lab/wirelike_truth.py), measured just before. The final trials last as long as the kernel
#    search's trials (2 s), so both answer the same question.
# How far apart the two may be is a measurement, not a correctness bound: the knee of receive livelock
# moves between two searches minutes apart on a shared 2-core machine (CI saw a rate pass at 0 % loss and
# lose 14 % on the next trial at the same rate; the PDR has landed 36 % under and 49 % over the kernel's
# answer). So the test (ctest, CI) fails only when the two are a factor of 2 apart, where the cause is a
# defect (a unit slip, a search collapsing to its floor, counts that disagree with the kernel's), and prints
# the figure. The 10 % target is graded by
# bench/run's wire-like section, which calls this script with --grade 10 --json FILE.
# ctest runs one instance (--instances 1: CI's time is bounded); bench/run both. The search is MLRsearch
# (RFC 9971) with one PDR goal (loss ratio 0.005, 2-s final trials like the kernel search's, a duration sum
# of one final trial, width 5 %); the check takes its conditional throughput, and prints the trial-seconds
# it spent. --old-harness BIN also runs an older harness binary (its search = { loss, trial, final,
# precision, max_trials } form; netload and netserve beside it) right after, on the same path, and prints
# both trial-seconds sums.
#   lab_wirelike.sh [--grade PCT] [--json FILE] [--instances "1 2"] [--old-harness BIN] HARNESS NETSERVE NETLOAD
lo=0.5 hi=2 bound="a factor of 2" bound_why="a defect, not the knee moving"
# The searches' depth: a factor of 2 needs no 2-% bracket, and CI's 30 minutes are shared by every test
# (5 %, 8 trials: about 40 s less than the graded depth); --grade searches as deep as the target needs.
precision=5 max_trials=8 truth_trials=8
json_out=""
old_harness=""
instances="1 2"
while [[ ${1:-} == --* ]]; do
  case $1 in
    --grade) [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "lab_wirelike.sh: --grade takes a whole percentage" >&2; exit 2; }
             lo=$(awk -v p="$2" 'BEGIN { print 1 - p / 100 }') hi=$(awk -v p="$2" 'BEGIN { print 1 + p / 100 }')
             bound="$2 %" bound_why="the target" precision=2 max_trials=14 truth_trials=12; shift 2 ;;
    --json) json_out=${2:?--json takes a file}; shift 2 ;;
    --instances) instances=${2:?--instances takes a list, e.g. "1 2"}; shift 2 ;;
    --old-harness) old_harness=${2:?--old-harness takes a harness binary}; shift 2 ;;
    *) echo "usage: lab_wirelike.sh [--grade PCT] [--json FILE] [--instances "1 2"] [--old-harness BIN] HARNESS NETSERVE NETLOAD" >&2; exit 2 ;;
  esac
done
[[ $# -eq 3 ]] || { echo "usage: lab_wirelike.sh [--grade PCT] [--json FILE] [--instances "1 2"] [--old-harness BIN] HARNESS NETSERVE NETLOAD" >&2; exit 2; }
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
: >"$work/figures.jsonl"
wl_up "$name" 0 >/dev/null
eval "$(wl_info "$name")"  # WL_TX_NS, WL_RX_NS, WL_TX_ADDR, WL_RX_ADDR

# For one and then two senders: the kernel's answer, then the harness's search right after it, so both
# see the machine in the same state (the knee of receive livelock moves with whatever else runs).
search_line() {  # new | old: the search in today's goals, or in the older form an older harness reads
  if [[ $1 == old ]]; then
    echo "search = { loss = [0.5], trial = 2, final = 2, precision = $precision, max_trials = $max_trials }"
  else
    echo "search = { max_trials = $((3 * max_trials)), goals = [ { name = \"PDR\", loss_ratio = 0.005, exceed_ratio = 0.5, initial_trial_duration = 1, final_trial_duration = 2, duration_sum = 2, width = 0.0$precision } ] }"
  fi
}
plan_for() {  # N [new|old]: the plan for N instances (with N = 1 also the unpaced runs)
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
$(search_line "$2")
TOML
  [[ $n -eq 1 && ${2:-new} == new ]] && cat <<TOML

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
# One attempt for N instances: the kernel's answer, then the harness right after it, then the check.
attempt() {  # N K
  local n=$1 k=$2 dir="$work/n$1-a$2"
  mkdir -p "$dir"
  timeout 300 python3 "$here/wirelike_truth.py" --netload "$netload" --netserve "$netserve" --name "$name" \
    -m 64 --senders "$n" -l 2 --thresholds 0.5 --max-trials "$truth_trials" --precision "0.0$precision" --json "$dir/truth.json" >"$dir/truth.txt" 2>&1 ||
    { tail -20 "$dir/truth.txt"; echo "FAIL: the kernel-counter search with $n sender(s) failed"; exit 1; }
  plan_for "$n" new >"$dir/plan.toml"
  timeout 400 "$harness" run "$dir/plan.toml" --results "$dir/results" --no-live >"$dir/console" 2>&1 ||
    { tail -30 "$dir/console"; echo "FAIL: harness run failed"; exit 1; }
  grep '^harness: search' "$dir/console"
  if [[ -n $old_harness ]]; then  # the older search on the same path, right after: its trial-seconds beside
    plan_for "$n" old >"$dir/old.toml"
    timeout 400 "$old_harness" run "$dir/old.toml" --results "$dir/old-results" --bin-dir "$(dirname "$old_harness")" --no-live \
      >"$dir/old-console" 2>&1 || { tail -30 "$dir/old-console"; echo "FAIL: the older harness's run failed"; exit 1; }
    python3 - "$dir" <<'PY'
import glob, json, sys
for run in json.load(open(glob.glob(f"{sys.argv[1]}/old-results/*/summary.json")[0]))["runs"]:
    if "search" in run:
        s = run["search"]
        print(f"older search  {run['run']:14} PDR {s['results'][0]['rate_pps']} pps in {len(s['trials'])} trials, "
              f"{sum(t['duration'] for t in s['trials']):g} trial-seconds")
PY
  fi
  python3 - "$dir" "$n" "$k" "$lo" "$hi" "$bound" "$bound_why" "$work/figures.jsonl" <<'PY'
import glob, json, sys
d, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lo, hi, bound, why, figures = float(sys.argv[4]), float(sys.argv[5]), sys.argv[6], sys.argv[7], sys.argv[8]
res = glob.glob(f"{d}/results/*/")[0]
runs = json.load(open(f"{res}/summary.json"))["runs"]
ok = True
for run in runs:
    if run.get("search_trial") or "search" in run or run["test"] != "unpaced":
        continue
    raw = json.load(open(glob.glob(f"{res}/raw/{run['run']}/01-*.json")[0]))["result"]
    v = raw.get("verdict") or {}
    print(f"{run['run']:14} sent {raw['sender']['pps']:9.0f} pps, received {raw['receiver']['pps']:9.0f} pps, "
          f"loss {raw['loss']['percent']:6.2f} %: {v.get('limit')}: {v.get('text')}")
    if v.get("limit") != "receiver-cpu":
        print("FAIL: an unpaced run on the wire-like path must say the receiver's CPU was the limit")
        sys.exit(2)  # a wrong verdict is not noise: no second attempt
for run in runs:
    if "search" not in run:
        continue
    best = json.load(open(f"{d}/truth.json"))["best"]["0.5"]["best_offered_pps"]
    s = run["search"]
    goal = s["goal_results"][0]
    pdr = goal["conditional_throughput"]
    trials = len(s["trials"])
    seconds = s["trial_seconds"]
    off = f"{100 * (pdr / best - 1):+.1f} %" if pdr and best else "n/a"
    print(f"{run['run']:14} {n} instance(s), attempt {k}: PDR conditional throughput {pdr} pps (relevant lower bound "
          f"{goal['relevant_lower_bound']}, upper {goal['relevant_upper_bound']}, "
          f"{'regular' if goal['regular'] else 'irregular: ' + '; '.join(goal['irregularities'])}) in {trials} trials, "
          f"{seconds:g} trial-seconds; kernel counters: best rate at <= 0.5 % loss {best} pps ({off})")
    within = bool(pdr and best) and lo <= pdr / best <= hi
    with open(figures, "a") as f:
        f.write(json.dumps({"instances": n, "attempt": k, "pdr_conditional_throughput_pps": pdr, "trials": trials, "trial_seconds": seconds,
                            "kernel_best_pps": best,
                            "bound": [lo, hi], "within": within}) + "\n")
    if not within:
        print(f"not within {bound} of the kernel's best rate ({why})"); ok = False
sys.exit(0 if ok else 1)
PY
}

write_figures() {  # every attempt's figures, for bench/run
  [[ -z $json_out ]] && return 0
  python3 -c 'import json, sys; print(json.dumps({"attempts": [json.loads(l) for l in open(sys.argv[1])]}))' \
    "$work/figures.jsonl" >"$json_out"
}

# Near receive livelock the knee moves between runs on a shared 2-core machine (a final trial that tips
# into livelock sends the search lower): one more attempt, both printed, before a mismatch fails.
for n in $instances; do
  [[ $n == 1 || $n == 2 ]] || { echo "lab_wirelike.sh: --instances takes 1 and/or 2" >&2; exit 2; }
  for k in 1 2; do
    attempt "$n" "$k" && continue 2
    rc=$?
    [[ $rc -eq 2 ]] && exit 1
  done
  echo "FAIL: with $n instance(s), the PDR missed the kernel's best rate by more than $bound twice ($bound_why)"
  write_figures
  exit 1
done
write_figures
echo "ok: livelock verdicts, and the PDR within $bound of the kernel's best rate for instances: $instances"
