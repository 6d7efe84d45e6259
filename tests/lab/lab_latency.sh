#!/usr/bin/env bash
# Lab test: round trips across the emulated circuit, and latency under load. configs/express-connect-lab.toml's
# hosts and circuit (50 Mbit/s tbf with a 20-ms queue), renamed so a lab a user has up is left alone, with
# three tests of its own:
#  - bps-with-probe: the BPS load at twice the circuit's rate, fan-in, with a latency probe (UDP_RR, 100/s,
#    2 s idle first): under the load the probe's requests wait in the full shaper queue, so its loaded p99
#    must rise by about that queue, 20 ms (harness/lab/lab_net.cpp: tbf's limit, 50 Mbit/s x 20 ms bytes):
#    between 10 and 25 ms above idle (the p99 also holds the scheduling of 17 processes on a 2-core machine);
#  - udp-rr (fan-in) and tcp-rr (fan-out): eight instances of request/response each, paced (their
#    answers 8 x 200 x 1000 bytes/s, a quarter of the circuit), every transaction answered and the merged
#    round trips in the report.
#   lab_latency.sh LAB_CLI HARNESS NETSERVE NETLOAD CONFIG
lab_cli=$1 harness=$2 netserve=$3 netload=$4 config=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

plan="$work/ec-latency.toml"
# The hosts, groups and [lab] of the procedure's lab plan, its tests replaced by this test's.
python3 - "$config" "$plan" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = text.replace('"ec-', '"lat-').replace('name = "ec"', 'name = "lat"')
text = text.replace('name = "express-connect-lab"', 'name = "ec-latency-test"')
head, rest = text.split("[[tests]]", 1)
lab = rest[rest.index("[lab]"):]
head = re.sub(r"^duration = .*$", "duration = 4", head, flags=re.M)
tests = '''
[[tests]]
name = "bps-with-probe"
kind = "UDP_STREAM"
message_size = 1400
rate = "12.5M"
topology = "fan-in"
server = "device"
clients = "instances"
latency_probe = { pps = 100, idle = 2 }

[[tests]]
name = "udp-rr"
kind = "UDP_RR"
message_size = 64
response_size = 512
pps = 200
duration = 2
topology = "fan-in"
server = "device"
clients = "instances"

[[tests]]
name = "tcp-rr"
kind = "TCP_RR"
message_size = 100
response_size = 1000
burst = 1
pps = 200
duration = 2
topology = "fan-out"
client = "device"
servers = "instances"

'''
open(sys.argv[2], "w").write(head + tests + lab)
PY
grep -q '"lat-circuit"' "$plan" || { echo "FAIL: $config no longer has the expected [lab] names"; exit 1; }
lab_start "$lab_cli" "$plan"

# Exit status 5, a start later than the plan's skew bound (17 processes on two cores), is no failure here.
status=0
"$harness" run "$plan" --results "$work/results" --no-live >"$work/console" 2>&1 || status=$?
[[ $status == 0 || $status == 5 ]] || { tail -30 "$work/console"; echo "FAIL: harness run exited $status"; exit 1; }
grep "^harness: run .* skewed: " "$work/console" || true
grep -h "^Latency probe\|^Transactions" "$work"/results/*/report.md
grep -q "Latency probe: the round trips of each interval" "$work"/results/*/report.html ||
  { echo "FAIL: report.html has no latency chart"; exit 1; }

python3 - "$work" <<'PY'
import glob, json, sys
work = sys.argv[1]
summary = json.load(open(glob.glob(f"{work}/results/*/summary.json")[0]))
ok = True
for run in summary["runs"]:
    if not run["ok"]:
        print(f"FAIL: {run['run']}: {run['failures']}"); ok = False; continue
    if run["kind"].endswith("_RR"):
        rr = run["rr"]
        sent = run["sum"]["sender"]["packets"]
        print(f"{run['run']:20} {rr['transactions']} of {sent} transactions answered, p50 {rr['latency']['p50_us']:.0f} us, "
              f"p99 {rr['latency']['p99_us']:.0f} us")
        if rr["transactions"] != sent or rr["timeouts"]:
            print("FAIL: a transaction went unanswered on an unloaded circuit"); ok = False
        if not 8 * 200 * 2 * 0.95 <= sent <= 8 * 200 * 2 * 1.05:
            print("FAIL: not the paced 8 x 200 transactions/s for 2 s"); ok = False
        continue
    probe = run.get("probe")
    if not probe or probe["error"]:
        print(f"FAIL: {run['run']}: no latency probe figures: {probe and probe['error']}"); ok = False; continue
    idle, loaded = probe["idle"], probe["loaded"]
    rise_ms = (loaded["p99_us"] - idle["p99_us"]) / 1e3
    print(f"{run['run']:20} probe idle p99 {idle['p99_us']:.0f} us ({idle['count']} round trips), under load p99 "
          f"{loaded['p99_us']:.0f} us ({loaded['count']}): +{rise_ms:.1f} ms; {probe['timeouts']} given up")
    if idle["count"] < 150 or loaded["count"] < 100:
        print("FAIL: too few probe round trips"); ok = False
    if not 10 <= rise_ms <= 25:
        print("FAIL: loaded p99 is not 10 to 25 ms above idle (the shaper's queue holds 20 ms)")
        ok = False
sys.exit(0 if ok else 1)
PY
