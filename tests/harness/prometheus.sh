#!/bin/sh
# A real Prometheus (Debian's /usr/bin/prometheus) scrapes `harness watch --listen` every second, with the
# scrape configuration the README shows: `--count 1`, and the one run's figures stay served after it (the
# linger) until Prometheus has scraped them; the value it stored for the test's received packet rate equals
# summary.json's. Prometheus reads the exposition with its strict
# OpenMetrics parser (it asks for that format first), so a malformed line fails the scrape and the test.
# Everything on 127.0.0.1; the whole test bounded to about a minute. Exit 77 (skipped) without prometheus.
set -eu
harness=$1
build=$2
prometheus=${PROMETHEUS:-/usr/bin/prometheus}
[ -x "$prometheus" ] || { echo "SKIP: $prometheus is not installed (scripts/bootstrap installs it)"; exit 77; }
tmp=$(mktemp -d /tmp/harness-prom.XXXXXX)
ppid_="" hpid=""
cleanup() {
  for p in $hpid $ppid_; do kill -TERM "$p" 2>/dev/null || true; done
  for p in $hpid $ppid_; do
    for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -n 20 "$tmp/err" "$tmp/prom.log" 2>/dev/null; exit 1; }
. "$(dirname "$0")/common.sh"
fan_in_plan w 1  # its start-skew bound of 200 ms: on a loaded machine run 1 must be ok all the same
# Two free ports: Prometheus needs its target's port before the harness starts.
set -- $(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
port=$1 pport=$2
cat > "$tmp/prometheus.yml" <<YML
scrape_configs:
  - job_name: netbench
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ["127.0.0.1:$port"]
YML
"$prometheus" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$pport" > "$tmp/prom.log" 2>&1 &
ppid_=$!
# One run (--count 1): the watch keeps serving its figures after it (--linger, 1m by default), so that a
# scraper reads them before the endpoint closes.
"$harness" watch "$tmp/w.toml" --every 60s --count 1 --listen "127.0.0.1:$port" --db "$tmp/db.sqlite" \
  --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" &
hpid=$!
for i in $(seq 200); do
  grep -q '^run 1 ' "$tmp/out" && break
  sleep 0.1
done
grep -q '^run 1 .*: ok' "$tmp/out" || fail "run 1: $(cat "$tmp/out")"
grep -q "^harness: metrics on http://127.0.0.1:$port/metrics$" "$tmp/err" || fail "no 'metrics on' line"
dir=$(ls -d "$tmp"/results/w-*)
python3 - "$pport" "$dir/summary.json" <<'PY' || fail "Prometheus' value"
import json, sys, time, urllib.parse, urllib.request
api = f"http://127.0.0.1:{sys.argv[1]}/api/v1/"
[run] = json.load(open(sys.argv[2]))["runs"]
want = run["sum"]["receiver"]["pps"]
query = 'netbench_received_packets_per_second{test="t",netbench_instance="all"}'
got, deadline = None, time.time() + 30
while time.time() < deadline:
    try:
        r = json.load(urllib.request.urlopen(api + "query?" + urllib.parse.urlencode({"query": query}), timeout=2))
        if r["status"] == "success" and r["data"]["result"]:
            [series] = r["data"]["result"]
            got = float(series["value"][1])
            break
    except OSError:
        pass  # Prometheus still starting
    time.sleep(0.3)
targets = json.load(urllib.request.urlopen(api + "targets", timeout=2))["data"]["activeTargets"]
assert got is not None, ("no sample", [(t["health"], t["lastError"]) for t in targets])
assert [t["health"] for t in targets] == ["up"], [(t["health"], t["lastError"]) for t in targets]
assert series["metric"]["plan"] == "w" and series["metric"]["role"] == "device as server", series["metric"]
assert abs(got - want) <= 1e-9 * want, (got, want)
r = json.load(urllib.request.urlopen(api + "query?" + urllib.parse.urlencode({"query": "netbench_runs_total"}), timeout=2))
assert float(r["data"]["result"][0]["value"][1]) == 1, r
print(f"ok: Prometheus scraped {query} = {got} (summary.json {want})")
PY
# A signal in the linger closes the endpoint at once; every run was done, so the status is theirs.
kill -INT $hpid
status=0
wait $hpid || status=$?
hpid=""
[ $status -eq 0 ] || fail "the harness exited $status on SIGINT in the linger, not 0"
grep -q "^harness: signal 2 (Interrupt): the metrics endpoint closes now$" "$tmp/err" || fail "no word of the closing"
