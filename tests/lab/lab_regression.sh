#!/usr/bin/env bash
# Lab test: a drop in a circuit's packet rate is flagged, and a recovery is not. One plan (two netns
# instances sending to the device through the emulated circuit, paced at twice the circuit's limit) runs
# three times into a fresh results database:
#   1. the circuit at 4000 pps                        -> recorded, no baseline yet
#   2. `harness lab up` with the limit lowered by 30 % (2800 pps), the same plan, --fail-on-regression
#                                                     -> REGRESSION, exit status 4
#   3. the limit back at 4000 pps, --fail-on-regression -> not flagged, exit status 0
# Then `harness history` and `harness history --html` of the store: three points per measurement.
# Each run: 2 repeats of 2 s, 2 x 4000 pps of 1-byte datagrams (modest for a 2-core machine).
#   lab_regression.sh LAB_CLI NETSERVE NETLOAD HARNESS
lab_cli=$1 netserve=$2 netload=$3 harness=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

# plan LIMIT: the plan with its circuit at LIMIT pps (the same plan name every time: one series).
plan() {
  cat <<PLAN
name = "lab-regression"
[defaults]
duration = 2
warmup = 0.5
repeats = 2
lead = 1.0
skew_bound_ms = 50
ports = "11256-11257"
[hosts]
device = { address = "198.18.0.2", launcher = "netns", namespace = "lreg-dev" }
i1 = { address = "198.19.0.2", launcher = "netns", namespace = "lreg-i1" }
i2 = { address = "198.19.0.3", launcher = "netns", namespace = "lreg-i2" }
[groups]
instances = ["i1", "i2"]
[[tests]]
name = "pps"
kind = "UDP_STREAM"
message_size = 1
pps = 4000              # per instance: 2 x 4000 = twice the circuit's first limit
topology = "fan-in"
server = "device"
clients = "instances"
[lab]
name = "lreg"
circuit_namespace = "lreg-circuit"
onprem_gateway = "198.18.0.1/24"
vpc_gateway = "198.19.0.1/24"
device = { namespace = "lreg-dev", address = "198.18.0.2" }
instances = [
  { namespace = "lreg-i1", address = "198.19.0.2" },
  { namespace = "lreg-i2", address = "198.19.0.3" },
]
[lab.circuit]
pps = $1
mtu_onprem = 1500
mtu_vpc = 1500
PLAN
}

db=$work/store.sqlite
# step N LIMIT [ARGS...]: the circuit set to LIMIT (lab up replaces its settings), the plan run; $status.
step() {
  local n=$1 limit=$2; shift 2
  plan "$limit" >"$work/plan$n.toml"
  lab_start "$lab_cli" "$work/plan$n.toml"
  status=0
  "$harness" run "$work/plan$n.toml" --results "$work/results" --db "$db" --no-live "$@" \
    >"$work/out$n" 2>"$work/err$n" || status=$?
  echo "--- run $n: circuit at $limit pps, exit status $status"
  grep -E "^(REGRESSION|no regression|no baseline|  level shift)" "$work/out$n" || true
}
fail() { echo "FAIL: $*"; cat "$work/err$1" 2>/dev/null | tail -20; exit 1; }

step 1 4000
[[ $status -eq 0 ]] || fail "run 1 exited $status" 1
grep -q "^no baseline yet: pps-m1" "$work/out1" || fail "run 1 should have no baseline" 1
step 2 2800 --fail-on-regression
[[ $status -eq 4 ]] || fail "run 2 (limit -30 %) exited $status, not 4" 2
grep -q "^REGRESSION: pps-m1 " "$work/out2" || fail "run 2 is not flagged as a regression" 2
step 3 4000 --fail-on-regression
[[ $status -eq 0 ]] || fail "run 3 (limit back) exited $status, not 0" 3
grep -q "^no regression: pps-m1 " "$work/out3" || fail "run 3 is not judged, or is flagged" 3

"$harness" history --db "$db"
"$harness" history --db "$db" --html "$work/history.html" || fail "history --html"
"$harness" history --db "$db" --json >"$work/history.json" || fail "history --json"
"$harness" history --db "$db" --plan lab-regression --csv >"$work/history.csv" || fail "history --csv"
head -1 "$work/history.csv" | grep -q ',level_shift_percent$' || fail "history --csv has no level_shift_percent column"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
[s] = json.load(open(f"{work}/history.json"))["series"]
rx = [p["received_pps"]["mean"] for p in s["points"]]
print("received pps per run:", ", ".join(f"{v:.0f}" for v in rx))
assert len(rx) == 3, rx
page = open(f"{work}/history.html").read()
charts = page.count('<figure class="chart" data-chart="history-')
assert charts == 1, f"history.html has {charts} history charts, not 1"
PY
echo "PASS"
