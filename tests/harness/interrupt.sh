#!/bin/sh
# Ctrl-C in the middle of a run: the harness stops every netserve and netload it started, keeps what
# was measured (raw files of the interrupted instances say they failed), and exits non-zero. The third
# argument is the signal (INT by default; HUP: the terminal or ssh session went away).
set -eu
harness=$1
build=$2
sig=${3:-INT}
tmp=$(mktemp -d /tmp/harness-int.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/common.sh"
fan_in_plan long 20
"$harness" run "$tmp/long.toml" --results "$tmp/results" --bin-dir "$build" > "$tmp/out" 2> "$tmp/err" &
pid=$!
# Wait until the instances run (three children: one netserve, two netload), then interrupt.
for i in $(seq 100); do
  [ "$(pgrep -P $pid | wc -l)" -ge 3 ] && break
  sleep 0.1
done
children=$(pgrep -P $pid | tr '\n' ' ')
[ -n "$children" ] || { echo "FAIL: the run never started its processes"; cat "$tmp/err"; kill $pid; exit 1; }
sleep 1.5
started=$(date +%s)
kill -$sig $pid
status=0
wait $pid || status=$?
elapsed=$(( $(date +%s) - started ))
cat "$tmp/err"
[ $status -ne 0 ] || { echo "FAIL: an interrupted run exited 0"; exit 1; }
[ $elapsed -le 10 ] || { echo "FAIL: took ${elapsed}s to stop"; exit 1; }
grep -q "interrupted" "$tmp/err" || { echo "FAIL: no 'interrupted' message"; exit 1; }
for c in $children; do
  if kill -0 "$c" 2>/dev/null && ! grep -q zombie "/proc/$c/status" 2>/dev/null; then
    echo "FAIL: process $c left running: $(tr '\0' ' ' < /proc/$c/cmdline)"; exit 1
  fi
done
dir=$(ls -d "$tmp"/results/long-*)
[ "$(ls "$dir/raw/t-m64" | wc -l)" = 3 ] || { echo "FAIL: raw files missing"; ls -R "$dir"; exit 1; }
grep -q '"ok": false' "$dir/summary.json" || { echo "FAIL: the interrupted run is not marked failed"; exit 1; }
echo "ok: SIG$sig stopped ${children}within ${elapsed}s, raw files kept, run marked failed"
