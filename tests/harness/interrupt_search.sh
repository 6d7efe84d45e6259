#!/bin/sh
# A stop during a rate search, in its third trial: no trial starts after the signal, the trial under way
# stops and teaches the search nothing but stays in the record, marked, with what it counted until the
# stop (search.json and report.md); raw/<run>/search.json says "interrupted", every goal not yet
# established says so, reports are written and the exit status is 130.
#   interrupt_search.sh HARNESS BUILD_DIR
set -eu
harness=$1
build=$2
tmp=$(mktemp -d /tmp/harness-int-search.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/common.sh"
fan_in_plan s 1 "[0, 0]" '["a", "a"]' 'search = { goals = [ { name = "PDR", loss_ratio = 0.005, initial_trial_duration = 3, final_trial_duration = 3, duration_sum = 9, width = 0.001 } ] }'
setsid "$harness" run "$tmp/s.toml" --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" &
hpid=$!
trials() {  # the trial folders so far
  ls -d "$tmp"/results/s-*/raw/t-m64-s* 2>/dev/null | wc -l
}
for i in $(seq 600); do  # the third trial's start instant is set: its traffic begins 0.5 s on (lead)
  ls "$tmp"/results/s-*/raw/t-m64-s03-*/run.json >/dev/null 2>&1 && break
  sleep 0.05
done
before=$(trials)
[ "$before" -ge 3 ] || { echo "FAIL: the search never reached its third trial"; cat "$tmp/err"; kill $hpid; exit 1; }
sleep 1  # into the third trial's 3-s traffic (a busy machine may delay this shell a little)
kill -INT -$hpid
status=0
wait $hpid || status=$?
cat "$tmp/err" | grep '^harness: search' || true
[ $status -eq 130 ] || { echo "FAIL: exit status $status, not 130"; exit 1; }
after=$(trials)
# A trial that started between the count and the signal is the one under way; none may start after it.
[ "$after" -le $((before + 1)) ] || { echo "FAIL: $before trial folders at the signal, $after after it"; exit 1; }
python3 - "$tmp" "$after" <<'PY'
import glob, json, sys
tmp, folders = sys.argv[1], int(sys.argv[2])
rec = json.load(open(glob.glob(f"{tmp}/results/s-*/raw/t-m64/search.json")[0]))
s = rec["search"]
ok = True
def fail(why):
    global ok
    print("FAIL:", why); ok = False
if not (rec["interrupted"] and s["interrupted"]): fail("search.json does not say interrupted")
if s["stopped"] != "interrupted by a stop": fail(f"stopped: {s['stopped']!r}")
# Every trial is in the record. The third one's run.json says whether the stop cut it short (a machine
# this busy can delay the signal past its end): if so it is marked, with its counts until the stop.
if len(s["trials"]) != folders: fail(f"{len(s['trials'])} trials recorded of {folders} folders")
third = json.load(open(glob.glob(f"{tmp}/results/s-*/raw/t-m64-s03-*/run.json")[0]))
cut = [t for t in s["trials"] if t.get("interrupted")]
if third.get("interrupted"):
    if len(cut) != 1 or cut[0] is not s["trials"][-1]:
        fail(f"{len(cut)} trials marked interrupted, not the last one alone")
    elif not isinstance(cut[0].get("until_stop"), dict) or cut[0]["until_stop"]["offered_count"] <= 0:
        fail(f"the interrupted trial has no counts until the stop: {cut[0].get('until_stop')}")
    print(f"the stop cut the third trial short after {third['measured_s']:.2f} s: marked, with its counts")
elif cut:
    fail("a trial marked interrupted that its run.json says ran to its end")
else:
    print("the stop came after the third trial's traffic ended: no trial marked interrupted")
if sum(t["trial_duration"] for t in s["trials"] if not t.get("interrupted")) != s["trial_seconds"]:
    fail("the interrupted trial counts in the trial-seconds")
for g in s["goal_results"]:
    if not g["regular"] and not g["interrupted"]: fail(f"goal {g['goal']['name']} unestablished but not marked interrupted")
md = open(glob.glob(f"{tmp}/results/s-*/report.md")[0]).read()
if "not established (interrupted)" not in md: fail("report.md does not say the goal was not established")
if third.get("interrupted") and "INTERRUPTED after" not in md: fail("report.md does not show the interrupted trial")
print(f"ok: {len(s['trials'])} trials recorded, {folders} trial folders, search.json interrupted")
sys.exit(0 if ok else 1)
PY
