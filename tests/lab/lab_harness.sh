#!/usr/bin/env bash
# Lab test: the harness reads the circuit's limits back. configs/express-connect-lab.toml (the whole
# procedure, both roles, PPS -m 1 and BPS -m 1400, eight netns instances) runs against its own lab, renamed
# so a lab a user has up is left alone, and shortened to 3 s per test. Checks, per run of summary.json:
#  - PPS: steady-state aggregate received pps within 5 % of the circuit's 20000;
#  - BPS: steady-state received payload bit rate within 5 % of 50 Mbit/s x 1400/1442 (tbf counts frames);
#  - all runs: the summed received packets equal the kernel's UDP-delivered counters of the receiving
#    hosts (nft) within 1 %; sender - receiver is accounted for by the circuit's counted drops.
# With "unpaced", the plan as a user trims it: its tests' `pps` and `rate` removed, the procedure's
# unthrottled senders (sixteen processes on two cores). Either way every run must end with its figures;
# exit status 5 (an instance started later than the plan's skew bound: the run is marked, not voided) is
# said, and no failure here.
#   lab_harness.sh LAB_CLI HARNESS NETSERVE NETLOAD CONFIG [unpaced]
lab_cli=$1 harness=$2 netserve=$3 netload=$4 config=$5 unpaced=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

plan="$work/ec-test.toml"
sed -E 's/"ec-/"lht-/g; s/^name = "ec"/name = "lht"/; s/^name = "express-connect-lab"/name = "ec-lab-test"/;
        s/^duration = 5/duration = 3/' "$config" >"$plan"
grep -q '"lht-circuit"' "$plan" || { echo "FAIL: $config no longer has the expected [lab] names"; exit 1; }
if [[ $unpaced == unpaced ]]; then  # the tests' pps and rate only: the circuit's [lab.circuit] keeps its own
  python3 - "$plan" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
tests, lab = text.split("\n[lab]\n", 1)
trimmed = re.sub(r"^(pps|rate) = .*\n", "", tests, flags=re.M)
assert trimmed != tests, "the plan's tests have no pps or rate to remove"
open(sys.argv[1], "w").write(trimmed + "\n[lab]\n" + lab)
PY
fi
lab_start "$lab_cli" "$plan"

run_plan=$plan
"$lab_cli" counters "$lab_toml" >"$work/before.json"
status=0
"$harness" run "$run_plan" --results "$work/results" --no-live >"$work/console" 2>&1 || status=$?
[[ $status == 0 || $status == 5 ]] || { tail -30 "$work/console"; echo "FAIL: harness run exited $status"; exit 1; }
grep "^harness: run .* skewed: " "$work/console" || true
"$lab_cli" counters "$lab_toml" >"$work/after.json"
sed -n '/^Summary/,$p' "$work/console"
# The report says where the difference between sender and receiver went: the circuit's own counts.
circuit_lines=$(grep -c "^Circuit (emulated): its packet-rate limit dropped" "$work"/results/*/report.md || true)
[ "$circuit_lines" -eq 4 ] || { echo "FAIL: report.md gives the circuit's drops for $circuit_lines of 4 runs"; exit 1; }
grep "^Circuit (emulated)" "$work"/results/*/report.md | head -2

python3 - "$work" <<'PY'
import glob, json, sys
work = sys.argv[1]
summary = json.load(open(glob.glob(f"{work}/results/*/summary.json")[0]))
before, after = (json.load(open(f"{work}/{w}.json")) for w in ("before", "after"))
ok, recv, sent = True, 0, 0
for run in summary["runs"]:
    if not run["ok"]:
        print(f"FAIL: {run['run']}: {run['failures']}"); ok = False; continue
    steady = run["steady_state"]["receiver"]
    if run["message_size"] == 1:
        limit, measured, unit, scale = 20000.0, steady["pps"], "pps", 1
    else:
        limit, measured, unit, scale = 50e6 * 1400 / 1442, steady["bits_per_second"], "Mbit/s", 1e6
    err = measured / limit - 1
    print(f"{run['run']:24} {run['role']:17} limit {limit / scale:8.2f} {unit}, steady-state received "
          f"{measured / scale:8.2f} {unit} ({err * 100:+.2f} %)")
    if abs(err) > 0.05:
        print("FAIL: more than 5 % from the circuit's limit"); ok = False
    recv += run["sum"]["receiver"]["packets"]
    sent += run["sum"]["sender"]["packets"]
def delta(*path):
    a, b = after, before
    for p in path:
        a, b = a[p], b[p]
    return a - b
kernel = sum(delta("hosts", h, "udp_delivered", "packets") for h in after["hosts"])
drops = sum(delta("circuit", "nft", f"{d}_dropped", "packets") + delta("circuit", f"tbf_{d}", "drops")
            for d in ("to_onprem", "to_vpc"))
print(f"all runs: received {recv} (harness), kernel UDP delivered {kernel} (nft, all hosts): {(kernel / recv - 1) * 100:+.3f} %")
print(f"all runs: sent {sent} - received {recv} = {sent - recv}; circuit drops counted {drops} (nft limit + tbf, "
      f"control packets included)")
if abs(kernel - recv) > 0.01 * recv:
    print("FAIL: the harness's received count and the kernel's differ by more than 1 %"); ok = False
if abs(sent - recv - drops) > 0.01 * sent:
    print("FAIL: sender - receiver is not the circuit's counted drops"); ok = False
sys.exit(0 if ok else 1)
PY
