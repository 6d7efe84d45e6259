#!/bin/sh
# `harness watch` with the real harness, one case per ctest entry:
#   count    --every 2s --count 3 into a fresh store: three lines on stdout, three folders in the store,
#            each run started 2 s after the previous start or after the previous end (no overlap), exit 0
#   between  SIGINT while it waits for the next run: it ends at once (< 1.5 s), exit 130, no process of its
#            left, the store intact (PRAGMA integrity_check), one folder, ok
#   listen   --listen 127.0.0.1:0: the bound address on stderr; GET /metrics is OpenMetrics whose figures equal
#            summary.json's; HEAD the same headers without the body; an absolute-form target served; 404
#            for another path, 405 for POST; bare LF line ends 400 at once; a stalled client cut off after 2 s;
#            SIGTERM ends it with 143
#   regression  two runs at 1000 pps per instance, then one at 700: its line says REGRESSION with the rates and
#            the change, and --fail-on-regression exits 4
#   inside   SIGINT inside the second run: that run is stopped and recorded as interrupted, exit 130
#   linger   --count 1 --listen --linger 3s: after the run its figures are still served, and the watch ends
#            by itself about 3 s later, exit 0
# Runs are 1 s on 127.0.0.1 / 127.0.0.2 with free ports; nothing leaves loopback.
set -eu
case_name=$1
harness=$2
build=$3
tmp=$(mktemp -d /tmp/harness-watch.XXXXXX)
pids_to_clean=""
cleanup() {
  for p in $pids_to_clean; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/out" ] && cat "$tmp/out"; [ -f "$tmp/err" ] && tail -n 30 "$tmp/err"; exit 1; }
. "$(dirname "$0")/common.sh"
sql() { sqlite3 "$tmp/fresh.sqlite" "$1"; }
# plan NAME DURATION: common.sh's plan (its start-skew bound of 200 ms: these cases are about when runs
# start and stop, and on a loaded 2-core machine an instance may start 20 ms late).
plan() { fan_in_plan "$1" "$2"; }
plan w 1

# start_watch ARGS...: the harness watching $tmp/w.toml in the background, in its own process group (as a
# terminal's Ctrl-C reaches it); sets $hpid. Every process it starts is noted in $tmp/seen with its start
# time, to tell afterwards that none is left.
start_watch() {
  setsid "$harness" watch "$tmp/w.toml" --results "$tmp/results" --bin-dir "$build" --no-live --db "$tmp/fresh.sqlite" \
    "$@" > "$tmp/out" 2> "$tmp/err" &
  hpid=$!
  pids_to_clean="$pids_to_clean $hpid"
  (
    while kill -0 $hpid 2>/dev/null; do
      for p in $(pgrep -P $hpid); do echo "$p $(cut -d' ' -f22 /proc/$p/stat 2>/dev/null)"; done
      sleep 0.02
    done
  ) > "$tmp/seen" &
  pids_to_clean="$pids_to_clean $!"
}
# wait_lines N: until stdout has N lines (at most 30 s).
wait_lines() {
  for i in $(seq 300); do
    [ "$(grep -c '^run ' "$tmp/out" || true)" -ge "$1" ] && return 0
    sleep 0.1
  done
  fail "never $1 line(s)"
}
# stop_and_check SIGNAL: signals the group, waits; sets $status and $took; fails when a process is left or
# the store is damaged.
stop_and_check() {
  started=$(date +%s.%N)
  kill -"$1" -$hpid
  status=0
  wait $hpid || status=$?
  took=$(python3 -c "import time; print(f'{time.time() - $started:.2f}')")
  sleep 0.1
  while read -r p start; do
    [ -n "$start" ] && [ "$(cut -d' ' -f22 /proc/$p/stat 2>/dev/null)" = "$start" ] && fail "process $p is left: $(tr '\0' ' ' < /proc/$p/cmdline)"
  done < "$tmp/seen"
  [ "$(sql "PRAGMA integrity_check")" = ok ] || fail "integrity_check: $(sql "PRAGMA integrity_check")"
}

case $case_name in
count)
  status=0
  "$harness" watch "$tmp/w.toml" --every 2s --count 3 --db "$tmp/fresh.sqlite" --results "$tmp/results" --bin-dir "$build" \
    --no-live > "$tmp/out" 2> "$tmp/err" || status=$?
  [ $status -eq 0 ] || fail "exit $status"
  [ "$(wc -l < "$tmp/out")" = 3 ] || fail "not three lines on stdout"
  grep -Eq '^run 1 at [0-9T:-]*Z: w-[0-9T]*Z[-0-9]*: ok, no baseline yet: t-m64 received [0-9.]+ pps$' "$tmp/out" ||
    fail "line 1"
  grep -Eq '^run 2 at [0-9T:-]*Z, (2\.[0-9][0-9] s after run 1 started|at once after run 1 ended \(it took [0-9.]+ s, longer than --every 2 s\)): w-.*: ok, no regression against .*: t-m64 \(device .*\) received [0-9.]+ pps against [0-9.]+ \([-+][0-9.]+ %\)$' "$tmp/out" ||
    fail "line 2"
  grep -q '^run 3 at ' "$tmp/out" || fail "line 3"
  [ "$(sql "SELECT count(*) FROM folders WHERE status = 'ok'")" = 3 ] || fail "store: $(sql "SELECT name, status FROM folders")"
  [ "$(sql "SELECT count(*) FROM runs WHERE ok = 1 AND received_pps > 1500")" = 3 ] || fail "runs: $(sql "SELECT * FROM runs")"
  # No overlap: each run started 2 s (less the clock's grain) after the previous start, or after the
  # previous one was recorded (its end).
  sql "SELECT started_utc, imported_utc FROM folders ORDER BY started_utc" | python3 -c '
import sys
rows = [tuple(map(float, l.split("|"))) for l in sys.stdin]
assert len(rows) == 3, rows
for (s0, e0), (s1, e1) in zip(rows, rows[1:]):
    assert s1 - s0 >= 1.99 or s1 >= e0, ("overlap", rows)
    assert s1 - s0 < 2.5 or s1 - e0 < 0.5, ("waited too long", rows)
print("ok: starts", [round(b[0] - a[0], 2) for a, b in zip(rows, rows[1:])], "s apart")' || fail "runs overlap"
  cat "$tmp/out"
  ;;
between)
  start_watch --every 30s
  wait_lines 1
  sleep 0.5
  stop_and_check INT
  [ $status -eq 130 ] || fail "exit $status, not 130"
  python3 -c "import sys; sys.exit(0 if $took < 1.5 else 1)" || fail "took $took s to stop"
  grep -q "the watch ends; no run starts after it" "$tmp/err" || fail "stderr does not say it"
  [ "$(wc -l < "$tmp/out")" = 1 ] || fail "a second run started"
  [ "$(sql "SELECT count(*), min(status) FROM folders")" = "1|ok" ] || fail "store: $(sql "SELECT name, status FROM folders")"
  echo "ok: SIGINT between runs ended the watch in $took s, exit 130"
  ;;
inside)
  plan w 4
  start_watch --every 1s
  wait_lines 1
  for i in $(seq 100); do
    [ "$(ls -d "$tmp"/results/w-* | wc -l)" -ge 2 ] && [ -n "$(ls "$tmp"/results/w-*/raw/*/run.json 2>/dev/null | sed -n 2p)" ] && break
    sleep 0.05
  done
  sleep 1.5
  stop_and_check INT
  [ $status -eq 130 ] || fail "exit $status, not 130"
  grep -q '^run 2 at .*: INTERRUPTED by SIGINT, recorded as interrupted$' "$tmp/out" || fail "line 2"
  [ "$(sql "SELECT status FROM folders ORDER BY started_utc")" = "$(printf 'ok\ninterrupted')" ] ||
    fail "store: $(sql "SELECT name, status FROM folders")"
  echo "ok: SIGINT inside run 2 stopped it ($took s), recorded as interrupted, exit 130"
  ;;
regression)
  watch() { status=0; "$harness" watch "$tmp/w.toml" --db "$tmp/fresh.sqlite" --results "$tmp/results" --bin-dir "$build" \
    --no-live "$@" > "$tmp/out" 2> "$tmp/err" || status=$?; }
  watch --every 1s --count 2
  [ $status -eq 0 ] || fail "at 1000 pps: exit $status"
  sed -i 's/^pps = 1000$/pps = 700/' "$tmp/w.toml"
  watch --every 1s --count 1 --fail-on-regression
  [ $status -eq 4 ] || fail "a 30 % drop exited $status, not 4"
  grep -Eq '^run 1 at .*: REGRESSION against up to 5 earlier results folders of the plan: t-m64 \(device as server\) received [0-9]+\.[0-9] pps against [0-9]+\.[0-9] \(-[0-9]+\.[0-9] %\)$' "$tmp/out" ||
    fail "no REGRESSION line"
  cat "$tmp/out"
  ;;
listen)
  start_watch --every 30s --listen 127.0.0.1:0
  wait_lines 1
  url=$(sed -n 's|^harness: metrics on \(http://127\.0\.0\.1:[0-9]*/metrics\)$|\1|p' "$tmp/err")
  [ -n "$url" ] || fail "no 'metrics on' line"
  dir=$(ls -d "$tmp"/results/w-*)
  python3 - "$url" "$dir/summary.json" <<'PY' || fail "metrics"
import json, sys, urllib.error, urllib.request
url, summary = sys.argv[1], json.load(open(sys.argv[2]))
with urllib.request.urlopen(url, timeout=5) as r:
    assert r.headers["Content-Type"] == "application/openmetrics-text; version=1.0.0; charset=utf-8", r.headers
    text = r.read().decode()
assert text.endswith("\n# EOF\n"), text[-100:]
[run] = summary["runs"]
want = {'netbench_received_packets_per_second{plan="w",test="t",measurement="t-m64",role="device as server",message_size="64",netbench_instance="all"}':
            run["sum"]["receiver"]["pps"],
        'netbench_sent_bytes_per_second{plan="w",test="t",measurement="t-m64",role="device as server",message_size="64",netbench_instance="all"}':
            run["sum"]["sender"]["bits_per_second"] / 8,
        "netbench_runs_total": 1, "netbench_failed_runs_total": 0}
got = dict(l.rsplit(" ", 1) for l in text.splitlines() if not l.startswith("#"))
for k, v in want.items():
    assert abs(float(got[k]) - v) <= 1e-9 * max(1, abs(v)), (k, got.get(k), v)
for i in run["instances"]:
    k = 'netbench_received_packets_per_second{plan="w",test="t",measurement="t-m64",role="device as server",message_size="64",netbench_instance="%s"}' % i["instance"]
    assert float(got[k]) == i["receiver"]["pps"], (k, got.get(k))
for path, method, code in [("/", "GET", 404), ("/metrics", "POST", 405)]:
    try:
        urllib.request.urlopen(urllib.request.Request(url.replace("/metrics", path), method=method, data=b"" if method == "POST" else None), timeout=5)
        raise AssertionError(f"{method} {path} answered 200")
    except urllib.error.HTTPError as e:
        assert e.code == code, (method, path, e.code)
# HEAD gets GET's headers without the body; an absolute-form target is served; bare LF line ends are
# answered 400 at once, not at the deadline.
with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=5) as r:
    assert r.status == 200 and r.read() == b"" and int(r.headers["Content-Length"]) == len(text.encode()), r.headers
import socket, time
host, port = url.split("/")[2].split(":")
def exchange(request):
    c = socket.create_connection((host, int(port)), timeout=10)
    c.sendall(request)
    reply = b""
    while chunk := c.recv(65536):
        reply += chunk
    return reply
assert exchange(f"GET {url} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()).endswith(b"\n# EOF\n")
t = time.time()
assert exchange(b"GET /metrics HTTP/1.1\nHost: x\n\n").startswith(b"HTTP/1.1 400 ")
assert time.time() - t < 1, time.time() - t
# A client that sends half a request and waits is cut off by the server's head deadline (2 s), not kept.
c = socket.create_connection((host, int(port)), timeout=10)
c.sendall(b"GET /metrics HTTP/1.1\r\n")
t = time.time()
assert c.recv(100) == b"", "answered half a request"
assert 1.5 < time.time() - t < 4, time.time() - t
print("ok: /metrics equals summary.json:", run["sum"]["receiver"]["pps"], "pps; a stalled client cut off after",
      round(time.time() - t, 1), "s")
PY
  stop_and_check TERM
  [ $status -eq 143 ] || fail "exit $status, not 143"
  echo "ok: --listen 127.0.0.1:0 served the last run's figures; SIGTERM ended it, exit 143"
  ;;
linger)
  start_watch --every 30s --count 1 --listen 127.0.0.1:0 --linger 3s
  wait_lines 1
  ended=$(date +%s.%N)
  url=$(sed -n 's|^harness: metrics on \(http://127\.0\.0\.1:[0-9]*/metrics\)$|\1|p' "$tmp/err")
  [ -n "$url" ] || fail "no 'metrics on' line"
  dir=$(ls -d "$tmp"/results/w-*)
  python3 - "$url" "$dir/summary.json" <<'PY' || fail "the run's figures were not served after it"
import json, sys, urllib.request
url, summary = sys.argv[1], json.load(open(sys.argv[2]))
text = urllib.request.urlopen(url, timeout=5).read().decode()
got = dict(l.rsplit(" ", 1) for l in text.splitlines() if not l.startswith("#"))
key = 'netbench_received_packets_per_second{plan="w",test="t",measurement="t-m64",role="device as server",message_size="64",netbench_instance="all"}'
assert float(got[key]) == summary["runs"][0]["sum"]["receiver"]["pps"], (got.get(key), summary["runs"][0]["sum"])
assert got["netbench_runs_total"] == "1", got.get("netbench_runs_total")
print("ok: run 1's figures served after it:", got[key], "pps")
PY
  grep -q "^harness: the last run's figures stay served for 3s (--linger), then the watch ends$" "$tmp/err" ||
    fail "no word of the linger"
  status=0
  wait $hpid || status=$?
  took=$(python3 -c "import time; print(f'{time.time() - $ended:.1f}')")
  [ $status -eq 0 ] || fail "exit $status, not 0"
  python3 -c "import sys; sys.exit(0 if 2.5 <= float(sys.argv[1]) <= 6 else 1)" "$took" ||
    fail "ended ${took} s after the run's line, not about 3 s"
  echo "ok: --count 1 --linger 3s: the figures served after the run, the watch ended ${took} s later, exit 0"
  ;;
*)
  echo "unknown case $case_name"; exit 2 ;;
esac
