#!/bin/sh
# A stop of `harness run` is absolute: no run starts after the signal, the run under way stops, and what
# was measured until then is kept and reported (report.html written, the run marked interrupted with the
# seconds measured, exit status 128 + signal).
# Arguments: harness, build folder, WHEN (between | inside), INSTANCES (1 .. 8).
# Between: the signal comes after run 1 ended (its instances' raw files are written, its netserve has
# exited), in the settle pause before run 2. Inside: 1 s into run 1's traffic. Afterwards every process the
# harness ran is checked by its start time (/proc/PID/stat): none may have started after the signal.
set -eu
harness=$1
build=$2
when=$3
n=$4
tmp=$(mktemp -d /tmp/harness-int2.XXXXXX)
trap 'kill $watch 2>/dev/null || true; rm -rf "$tmp"' EXIT
watch=""
. "$(dirname "$0")/common.sh"
fan_in_plan p 2 "$(python3 -c "import json; print(json.dumps([0] * $n))")" "$(python3 -c "import json; print(json.dumps(['a'] * $n))")"
# Three runs with a pause of 1.5 s between them: the window "between" signals into.
sed -i 's/^settle = .*/settle = 1.5\nrepeats = 3/' "$tmp/p.toml"
# In a process group of its own, which the signal then goes to as a terminal's Ctrl-C does: the harness
# and every process of that group get it at once (a child sharing the group would get it directly).
setsid "$harness" run "$tmp/p.toml" --results "$tmp/results" --bin-dir "$build" > "$tmp/out" 2> "$tmp/err" &
hpid=$!
# Every descendant process of the harness, with its start time in clock ticks since boot, as seen.
(
  while kill -0 $hpid 2>/dev/null; do
    for p in $(pgrep -P $hpid); do
      [ -r /proc/$p/stat ] && echo "$p $(cut -d' ' -f22 /proc/$p/stat 2>/dev/null) $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)"
    done
    sleep 0.02
  done
) > "$tmp/seen" &
watch=$!
dir=""
for i in $(seq 300); do
  dir=$(ls -d "$tmp"/results/p-* 2>/dev/null | head -n 1)
  run1=$(ls -d "$dir"/raw/*-r1 2>/dev/null | head -n 1)
  if [ -n "$run1" ]; then
    if [ "$when" = inside ]; then
      [ -s "$run1/run.json" ] && break  # written once T0 is chosen; traffic starts at T0 (lead 0.5 s)
    else
      # Every instance's raw file written and run 1's netserve gone: the settle pause before run 2.
      [ "$(ls "$run1" | grep -vc '^run.json$')" -ge "$n" ] && ! pgrep -P $hpid -f netserve > /dev/null && break
    fi
  fi
  sleep 0.05
done
[ -n "$dir" ] && [ -n "$run1" ] || { echo "FAIL: run 1 never started"; cat "$tmp/err"; kill $hpid; exit 1; }
[ "$when" = inside ] && sleep 1.5
ticks=$(getconf CLK_TCK)
signalled=$(awk -v t="$ticks" '{printf "%d", $1 * t}' /proc/uptime)  # now, in the same ticks as /proc/PID/stat
started=$(date +%s.%N)
kill -INT -$hpid
status=0
wait $hpid || status=$?
took=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
sleep 0.1
kill $watch 2>/dev/null || true
cat "$tmp/err"
fails=0
fail() { echo "FAIL: $*"; fails=1; }
[ $status -eq 130 ] || fail "exit status $status, want 130"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 12 else 1)" "$took" || fail "took ${took}s to stop"
# A tick is 10 ms: a process started in the same tick as the signal is counted as after it.
late=$(awk -v s="$signalled" '$2 >= s && /net(load|serve)/ {print}' "$tmp/seen" | sort -u)
[ -z "$late" ] || fail "processes started after the signal: $late"
ls "$dir/raw" | grep -q -- '-r2$' && fail "run 2 has a folder: it started after the signal"
[ -s "$dir/report.html" ] || fail "no report.html after the signal"
python3 - "$dir" "$run1" "$when" "$n" <<'PY' || fail "interrupted run's records"
import json, os, sys
d, run1, when, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
env = json.load(open(os.path.join(d, "environment.json")))
assert env["interrupted"]["signal"] == 2, env.get("interrupted")
spec = json.load(open(os.path.join(run1, "run.json")))
instances = [json.load(open(os.path.join(run1, f))) for f in os.listdir(run1) if f != "run.json"]
assert len(instances) == n, len(instances)
if when == "inside":
    assert spec.get("interrupted") is True and 0.5 <= spec["measured_s"] <= 2.0, spec.get("measured_s")
    for i in instances:  # each netload kept what it measured until the stop
        r = i["result"]
        assert r and r["ok"] and r["interrupted"], i.get("error")
        assert r["sender"]["packets"] == r["receiver"]["packets"] + r["loss"]["packets"]
        assert 0 < r["sender"]["packets"] <= 1000 * r["interrupted"]["measured_s"] + 60
    print(f"  run 1 interrupted after {spec['measured_s']:.2f} s; {n} instance(s) kept their figures")
else:
    assert not spec.get("interrupted"), "run 1 had ended before the signal"
    print(f"  run 1 complete; the signal came between runs")
PY
# Runs 2 and 3 never began: every report lists them, as report.html does.
why="stopped by SIGINT before it began"
for r in t-m64-r2 t-m64-r3; do
  grep -q "^- $r: \*\*not run\*\*: $why\$" "$dir/report.md" || fail "report.md does not list $r as not run"
  grep -q "^\"$r\",,,,,,\"NOT RUN: $why\"," "$dir/summary.csv" || fail "summary.csv does not list $r as not run"
  grep -q "run $r not run: $why" "$dir/report.html" || fail "report.html does not list $r as not run"
done
python3 - "$dir/summary.json" "$why" <<'PY' || fail "summary.json does not list runs 2 and 3 as not run"
import json, sys
got = json.load(open(sys.argv[1])).get("not_run")
assert got == [{"run": r, "why": sys.argv[2]} for r in ("t-m64-r2", "t-m64-r3")], got
PY
[ $fails -eq 0 ] && echo "ok: SIGINT $when runs ($n instance(s)): stopped in ${took}s, nothing started after it, report written"
exit $fails
