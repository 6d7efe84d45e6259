#!/bin/sh
# The live line when an instance's reports stop coming (the instance held with SIGSTOP for 2.5 s of a 5-s
# run, as a loaded host holds it): no line repeats the figures of the line before it; a line whose
# interval has not come from every instance says that nothing new arrived, and how many are behind. The
# two instances are paced alike, so two intervals' figures are the same: each line names its interval.
set -eu
harness=$1
build=$2
tmp=$(mktemp -d /tmp/harness-stale.XXXXXX)
pids_to_clean=""
cleanup() {
  for p in $pids_to_clean; do kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$tmp/err"; exit 1; }
. "$(dirname "$0")/common.sh"
fan_in_plan stale 5
# What is tested is the display: a late start on a busy machine is no failure here.
sed -i 's/^skew_bound_ms = .*/skew_bound_ms = 1000/' "$tmp/stale.toml"
"$harness" run "$tmp/stale.toml" --results "$tmp/results" --bin-dir "$build" > "$tmp/out" 2> "$tmp/err" &
pid=$!
pids_to_clean="$pid"
for i in $(seq 100); do grep -q '^  t-m64 .*interval 1\|^  t-m64 .*sent [0-9]' "$tmp/err" && break; sleep 0.1; done
load=$(pgrep -P "$pid" -f "netload .*--start-on-stdin" | head -1) || fail "no netload running"
pids_to_clean="$pids_to_clean $load"
kill -STOP "$load"
sleep 2.5
kill -CONT "$load"
status=0
wait "$pid" || status=$?
# 3: the held instance may miss its target or lose packets; the live lines are what is tested.
[ $status = 0 ] || [ $status = 3 ] || fail "the run exited $status"
grep '^  t-m64 ' "$tmp/err" > "$tmp/lines" || fail "no live line"
cat "$tmp/lines"
# The figures part of each line (after "failed N  "), one after the other.
sed 's/.* failed [0-9]*  //' "$tmp/lines" > "$tmp/figures"
uniq -d "$tmp/figures" | grep -v '^nothing new' > "$tmp/repeated" || true
[ ! -s "$tmp/repeated" ] || fail "a line repeats the figures of the line before it: $(cat "$tmp/repeated")"
grep -q 'nothing new: interval [0-9]* not reported yet by 1 of 2 running instance(s)$' "$tmp/lines" ||
  fail "no line said that nothing new had come from the held instance"
echo "ok: a held instance: the live line says that nothing new arrived, never the same figures again"
