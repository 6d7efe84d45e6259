#!/bin/sh
# A host whose wall clock is off, over ssh (issue 15): three hosts behind one throw-away sshd, one
# netserve host and two netload hosts, one of whose netload runs under faketime with its wall clock 2 s
# ahead (libfaketime, around the dynamic build; a time namespace would not move the wall clock).
#  - `harness check` names that host and measures its offset within 10 ms of +2000 ms, and the other
#    hosts' within the skew bound; it exits 1;
#  - `harness run` refuses the plan before any test starts;
#  - `harness run --allow-offset` runs it, and the two instances start within the skew bound of each other
#    by the receiving kernel's timestamps (netserve's first arrival per instance, on the server's clock,
#    which no faketime touches).
set -eu
[ -n "${KEEP:-}" ] && set -x
harness=$1
build=$2
[ "$(id -u)" = 0 ] || { echo "SKIP: sshd needs root to run here"; exit 77; }
command -v faketime >/dev/null || { echo "SKIP: faketime is not installed (scripts/bootstrap installs it)"; exit 77; }
tmp=$(mktemp -d /tmp/harness-clock.XXXXXX)
cleanup() { [ -f "$tmp/sshd.pid" ] && kill "$(cat "$tmp/sshd.pid")" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$tmp/bin" "$tmp/fast" "$tmp/results"
ln -s "$build/netserve/netserve" "$tmp/bin/netserve"
ln -s "$build/netload/netload" "$tmp/bin/netload"
cat > "$tmp/fast/netload" <<WRAP
#!/bin/sh
exec faketime -f +2s "$build/netload/netload" "\$@"
WRAP
chmod +x "$tmp/fast/netload"
. "$(dirname "$0")/../support/throwaway_sshd.sh"
start_throwaway_sshd "$tmp" 127.0.0.1 127.0.0.2 127.0.0.3

ssh_host() {  # ADDRESS BIN_DIR
  echo "{ address = \"$1\", launcher = \"ssh\", user = \"root\", ssh_port = $port, identity = \"$tmp/client_key\", bin_dir = \"$2\", ssh_options = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\", \"LogLevel=ERROR\"] }"
}
cat > "$tmp/clock.toml" <<PLAN
name = "clock"
[defaults]
duration = 2
warmup = 0
lead = 1.0
skew_bound_ms = 20
ports = [0, 0]
[hosts]
server = $(ssh_host 127.0.0.1 "$tmp/bin")
right = $(ssh_host 127.0.0.2 "$tmp/bin")
fast = $(ssh_host 127.0.0.3 "$tmp/fast")
[[tests]]
name = "clocks"
message_size = 100
pps = 2000
topology = "fan-in"
server = "server"
clients = ["right", "fast"]
PLAN

# 1. check: names the host, the offset within 10 ms of +2000 ms; exit 1.
status=0
"$harness" check "$tmp/clock.toml" > "$tmp/check.out" 2> "$tmp/check.err" || status=$?
cat "$tmp/check.out"
[ "$status" = 1 ] || { echo "FAIL: check exited $status, not 1"; cat "$tmp/check.err"; exit 1; }
grep -q "^error: host 'fast' (127.0.0.3): clock +" "$tmp/check.out" || { echo "FAIL: check did not name host 'fast'"; cat "$tmp/check.err"; exit 1; }
offset_of() { awk -v h="$1" '$1 == h { print $5 }' "$tmp/check.out"; }
python3 - "$(offset_of fast)" "$(offset_of right)" "$(offset_of server)" <<'PY' || exit 1
import sys
fast, right, server = map(float, sys.argv[1:])
print(f"measured offsets: fast {fast:+.2f} ms, right {right:+.2f} ms, server {server:+.2f} ms")
if abs(fast - 2000) > 10: sys.exit(f"FAIL: fast's offset {fast} ms is not within 10 ms of +2000 ms")
for name, v in (("right", right), ("server", server)):
    if abs(v) > 10: sys.exit(f"FAIL: {name}'s offset {v} ms: its clock is the harness's")
PY
if grep -q "^error: host '\(right\|server\)'" "$tmp/check.out"; then echo "FAIL: a host with a right clock in error"; exit 1; fi

# 2. run refuses: exit 1, no test started.
status=0
"$harness" run "$tmp/clock.toml" --results "$tmp/results" --no-live > "$tmp/run.out" 2> "$tmp/run.err" || status=$?
[ "$status" = 1 ] || { echo "FAIL: run exited $status, not 1"; cat "$tmp/run.err"; exit 1; }
grep -q "no test was started" "$tmp/run.err" || { echo "FAIL: run did not say why it refused"; cat "$tmp/run.err"; exit 1; }
if ls "$tmp"/results/clock-*/raw/* >/dev/null 2>&1; then echo "FAIL: a run started"; exit 1; fi
echo "ok: run refused: $(grep 'no test was started' "$tmp/run.err")"

# 3. run --allow-offset: both instances start within the skew bound by the receiver's kernel timestamps.
rm -rf "$tmp/results"/*
"$harness" run "$tmp/clock.toml" --allow-offset --results "$tmp/results" --no-live > "$tmp/run.out" 2> "$tmp/run.err" || {
  echo "FAIL: run --allow-offset exited $?"; cat "$tmp/run.err" "$tmp/run.out"; exit 1; }
dir=$(ls -d "$tmp"/results/clock-*)
python3 - "$dir" <<'PY'
import glob, json, sys
d = sys.argv[1]
firsts = {}
for f in sorted(glob.glob(f"{d}/raw/*/0*.json")):
    rec = json.load(open(f))
    firsts[rec["client"]] = rec["result"]["receiver"]["first_ns"]
if sorted(firsts) != ["fast", "right"]: sys.exit(f"FAIL: expected results of 'right' and 'fast', got {sorted(firsts)}")
skew = (max(firsts.values()) - min(firsts.values())) / 1e6
offsets = json.load(open(glob.glob(f"{d}/raw/*/run.json")[0]))["clock_offsets_ms"]
summary = json.load(open(f"{d}/summary.json"))["runs"][0]
print(f"first datagram at the receiver (kernel timestamps): fast - right = "
      f"{(firsts['fast'] - firsts['right']) / 1e6:+.2f} ms; corrected by {offsets['fast']:+.2f} ms; "
      f"the harness's start skew {summary['start_skew_ms']:.2f} ms; run ok: {summary['ok']}")
if skew > 20: sys.exit(f"FAIL: the instances started {skew:.1f} ms apart, more than the 20 ms skew bound")
if not summary["ok"]: sys.exit(f"FAIL: the run is not ok: {summary['failures']}")
if summary["start_skew_ms"] > 20: sys.exit("FAIL: the report's start skew is not on the harness's clock")
PY
echo "ok: a host 2 s ahead is caught by check and run, and --allow-offset starts both instances together"
