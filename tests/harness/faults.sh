#!/bin/sh
# Faults the harness must survive, one case per ctest entry (hardening):
#   stopped     a netload stopped with SIGSTOP ignores SIGTERM: 5 s after Ctrl-C everything is killed
#   twice       a second Ctrl-C kills everything at once
#   preflight   Ctrl-C while ssh waits for a server that never answers stops at once, not at ConnectTimeout,
#               and makes no results folder
#   clash       a netserve that cannot bind fails its run (said once), the next run still goes, `harness report`
#               exits non-zero naming the failed run, a missing run and an empty raw/
#   junk        `harness report` on a run.json of the wrong shape names the file
#   fsize       results that cannot be written (a file size limit): the first error, no *.tmp left
#   killed      a netserve killed mid-run: the per-second samples already received stay in raw/
# Runs are 1-2 s on 127.0.0.x with free ports; nothing leaves loopback.
set -eu
case_name=$1
harness=$2
build=$3
tmp=$(mktemp -d /tmp/harness-faults.XXXXXX)
pids_to_clean=""
cleanup() {
  for p in $pids_to_clean; do kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && cat "$tmp/err"; exit 1; }
. "$(dirname "$0")/common.sh"

# Starts the harness in the background on plan $1; sets $pid.
start() {
  "$harness" run "$tmp/$1.toml" --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" &
  pid=$!
  pids_to_clean="$pids_to_clean $pid"
}

# Waits until the harness runs N netload processes with --start-on-stdin; prints their pids.
netloads() {
  for i in $(seq 100); do
    found=$(pgrep -P "$pid" -f "netload .*--start-on-stdin" || true)
    [ "$(echo "$found" | grep -c .)" -ge "$1" ] && { echo "$found"; return; }
    sleep 0.1
  done
  echo "FAIL: netload never started" >&2
  cat "$tmp/err" >&2
  exit 1
}

# Waits at most $1 seconds for the harness to end; sets $status and $elapsed.
await_exit() {
  t0=$(date +%s)
  for i in $(seq $(($1 * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  elapsed=$(( $(date +%s) - t0 ))
  kill -0 "$pid" 2>/dev/null && fail "the harness still runs ${1}s after the signal"
  status=0
  wait "$pid" || status=$?
}

none_left() {
  for c in "$@"; do
    if kill -0 "$c" 2>/dev/null && ! grep -q zombie "/proc/$c/status" 2>/dev/null; then
      fail "process $c left running: $(tr '\0' ' ' < "/proc/$c/cmdline")"
    fi
  done
}

case $case_name in
stopped|twice)
  fan_in_plan long 30
  start long
  loads=$(netloads 2)
  children=$(pgrep -P "$pid" | tr '\n' ' ')
  pids_to_clean="$pids_to_clean $children"
  sleep 1
  kill -STOP $(echo "$loads" | head -1)   # ignores SIGTERM from now on
  kill -INT "$pid"
  if [ "$case_name" = twice ]; then
    sleep 0.5
    kill -INT "$pid"
    await_exit 3
  else
    await_exit 9
  fi
  [ "$status" -ne 0 ] || fail "an interrupted run exited 0"
  grep -q "interrupted" "$tmp/err" || fail "no 'interrupted' message"
  grep -q "SIGKILL" "$tmp/err" || fail "no word of killing"
  none_left $children
  echo "ok: a stopped netload did not hold the run: ended ${elapsed}s after the signal"
  ;;
preflight)
  # A server that accepts the connection and never says a word: ssh waits for its banner until
  # ConnectTimeout (30 s here).
  hold_port tcp
  cat > "$tmp/mute.toml" <<PLAN
name = "mute"
[defaults]
duration = 1
warmup = 0
ports = [0]
[hosts]
device = { address = "127.0.0.1", launcher = "ssh", ssh_port = $port, connect_timeout = 30, ssh_options = ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null"] }
a = { address = "127.0.0.2" }
[[tests]]
name = "t"
message_size = 64
topology = "fan-in"
server = "device"
clients = ["a"]
PLAN
  start mute
  for i in $(seq 50); do pgrep -P "$pid" -x ssh > /dev/null && break; sleep 0.1; done
  ssh_pid=$(pgrep -P "$pid" -x ssh) || fail "ssh never started"
  pids_to_clean="$pids_to_clean $ssh_pid"
  sleep 0.5
  kill -INT "$pid"
  await_exit 4
  [ "$status" -ne 0 ] || fail "an interrupted preflight exited 0"
  grep -q "interrupted" "$tmp/err" || fail "no 'interrupted' message"
  none_left $ssh_pid
  # Nothing ran: no results folder, and the line says so.
  [ ! -e "$tmp/results" ] || fail "a results folder was made though no run began"
  grep -q "^harness: interrupted by SIGINT before any run began: nothing was written (no results folder was made in $tmp/results)$" \
    "$tmp/err" || fail "no word that nothing was written"
  echo "ok: Ctrl-C in the ssh preflight ended the harness within ${elapsed}s"
  ;;
clash)
  # A port taken (TCP and UDP) by someone else: the first test's netserve cannot bind it.
  hold_port both
  fan_in_plan two 1 "[0]" '["a"]'
  cat >> "$tmp/two.toml" <<PLAN
ports = [$port]
[[tests]]
name = "u"
message_size = 64
pps = 1000
topology = "fan-in"
server = "device"
clients = ["a"]
PLAN
  status=0
  "$harness" run "$tmp/two.toml" --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" || status=$?
  [ "$status" = 3 ] || fail "expected exit status 3 (a run failed), got $status"
  said=$(grep -c "run t-m64 failed" "$tmp/err" || true)
  [ "$said" = 1 ] || fail "the failed run is said $said times on stderr, not once"
  dir=$(ls -d "$tmp"/results/two-*)
  python3 - "$dir/summary.json" <<'PY' || fail "summary.json does not record both runs"
import json, sys
runs = {r["run"]: r for r in json.load(open(sys.argv[1]))["runs"]}
assert set(runs) == {"t-m64", "u-m64"}, runs.keys()
assert not runs["t-m64"]["ok"] and "did not start" in runs["t-m64"]["error"], runs["t-m64"]
assert runs["u-m64"]["ok"], runs["u-m64"]
PY
  grep -q "did not start" "$dir/report.md" || fail "report.md does not say why the run failed"
  report() { status=0; "$harness" report "$dir" > "$tmp/out" 2> "$tmp/err" || status=$?; }
  report
  [ "$status" = 3 ] || fail "harness report on a failed run exited $status"
  grep -q "run t-m64 failed: run: netserve on host 'device' did not start" "$tmp/err" || fail "report does not name the failed run"
  rm -r "$dir/raw/t-m64"
  report
  [ "$status" = 3 ] || fail "harness report with a missing run exited $status"
  grep -q "run t-m64 is missing from raw/" "$tmp/err" || fail "report does not name the missing run"
  rm -r "$dir/raw/u-m64"
  report
  [ "$status" -ne 0 ] || fail "harness report on an empty raw/ exited 0"
  grep -q "holds no runs" "$tmp/err" || fail "report does not say raw/ is empty"
  echo "ok: the clash failed its run only; the next run went on; report exits 3 naming what is wrong"
  ;;
junk)
  mkdir -p "$tmp/res/raw/r1"
  echo '{"order": 0, "id": 5, "instances": []}' > "$tmp/res/raw/r1/run.json"
  status=0
  "$harness" report "$tmp/res" > "$tmp/out" 2> "$tmp/err" || status=$?
  [ "$status" = 1 ] || fail "exit status $status on a junk run.json"
  grep -q "$tmp/res/raw/r1/run.json: " "$tmp/err" || fail "the error does not name the file"
  echo '{"order": "first"}' > "$tmp/res/raw/r1/run.json"
  "$harness" report "$tmp/res" > "$tmp/out" 2> "$tmp/err" || status=$?
  grep -q "$tmp/res/raw/r1/run.json: " "$tmp/err" || fail "the error does not name the file"
  echo "ok: $(cat "$tmp/err")"
  ;;
fsize)
  # Every file the harness writes may be at most 4 KiB (ulimit -f counts 512-byte blocks; with SIGXFSZ
  # ignored, a longer write fails with EFBIG). A netload's raw file is larger: the first to fail.
  fan_in_plan big 1
  status=0
  sh -c 'ulimit -f 8; trap "" XFSZ; exec "$@"' sh "$harness" run "$tmp/big.toml" --results "$tmp/results" \
    --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" || status=$?
  [ "$status" = 1 ] || fail "exit status $status when results cannot be written"
  tail -1 "$tmp/err" | grep -q "harness: cannot write .*/raw/t-m64/0[12]-a.json: write: File too large" ||
    fail "the last line is not the first error (a netload's raw file, too large)"
  left=$(find "$tmp/results" -name '*.tmp')
  [ -z "$left" ] || fail "temporary files left: $left"
  echo "ok: $(tail -1 "$tmp/err")"
  ;;
killed)
  fan_in_plan dies 4 "[0]" '["a"]'
  start dies
  netloads 1 > /dev/null
  server=$(pgrep -P "$pid" -f "netserve/netserve")
  sleep 3  # T0 is 0.5 s after arming: two per-second samples are in
  kill -KILL "$server"
  await_exit 10
  [ "$status" = 3 ] || fail "expected exit status 3 (a run failed), got $status"
  dir=$(ls -d "$tmp"/results/dies-*)
  n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["samples"]))' "$dir/raw/t-m64/01-a.json")
  [ "$n" -ge 2 ] || fail "$n per-second samples kept in raw/, 2 were received"
  grep -q "netserve on 'device' ended with status" "$tmp/err" || fail "the killed netserve is not reported"
  echo "ok: $n samples of the dead run kept in raw/"
  ;;
*) echo "unknown case $case_name"; exit 2 ;;
esac
