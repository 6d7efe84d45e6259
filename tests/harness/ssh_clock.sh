#!/bin/sh
# A host whose wall clock is off, over ssh: three hosts behind one throw-away sshd, one
# netserve host and two netload hosts, one of whose netload runs under faketime with its wall clock 2 s
# ahead (libfaketime, around the dynamic build; a time namespace would not move the wall clock).
#  - `harness check` names that host and measures its offset within 10 ms of +2000 ms, and the other
#    hosts' within the skew bound; it exits 1;
#  - `harness run` refuses the plan before any test starts;
#  - `harness run --allow-offset` runs it, forward and reverse (netserve sends, by the start instant on
#    its own clock): the two instances start within the skew bound of each other by the receiving
#    kernel's timestamps, every interval has both sides' counts, and the run has its steady state.
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
# An ASan build refuses a preloaded library ahead of its runtime (libfaketime is one): told not to check.
cat > "$tmp/fast/netload" <<WRAP
#!/bin/sh
export ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}verify_asan_link_order=0
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

[[tests]]
name = "reverse"
message_size = 100
pps = 2000
reverse = true
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
summaries = {s["run"]: s for s in json.load(open(f"{d}/summary.json"))["runs"]}
if len(summaries) != 2: sys.exit(f"FAIL: expected the forward and the reverse run, got {sorted(summaries)}")
for run_dir in sorted(glob.glob(f"{d}/raw/*/")):
    spec = json.load(open(f"{run_dir}/run.json"))
    offsets = spec["clock_offsets_ms"]
    firsts, complete = {}, {}
    for f in sorted(glob.glob(f"{run_dir}/0*.json")):
        rec = json.load(open(f))
        res = rec["result"]
        firsts[rec["client"]] = res["receiver"]["first_ns"]
        complete[rec["client"]] = all(i["complete"] and i["received_packets"] > 0 for i in res["intervals"])
    s = summaries[spec["id"]]
    # The first datagram at each receiver, by its kernel's timestamp (SO_TIMESTAMPNS): libfaketime moves
    # what the program reads of the clock, not the kernel's stamps, so on every host here they are the one
    # real clock, a common reference for both directions.
    skew = (max(firsts.values()) - min(firsts.values())) / 1e6
    print(f"{spec['id']}: first datagrams at the receivers {skew:.2f} ms apart (kernel timestamps); corrected by "
          f"{offsets['fast']:+.2f} ms; start skew {s['start_skew_ms']:.2f} ms; every interval complete: "
          f"{all(complete.values())}; steady state: {'yes' if s['steady_state'] else s['steady_state_note']}; ok: {s['ok']}")
    if sorted(firsts) != ["fast", "right"]: sys.exit(f"FAIL: expected results of 'right' and 'fast', got {sorted(firsts)}")
    if skew > 20: sys.exit(f"FAIL: the instances started {skew:.1f} ms apart, more than the 20 ms skew bound")
    if not s["ok"]: sys.exit(f"FAIL: the run is not ok: {s['failures']}")
    if s["start_skew_ms"] > 20: sys.exit("FAIL: the report's start skew is not on the harness's clock")
    if not all(complete.values()): sys.exit(f"FAIL: an instance has intervals without both sides' counts: {complete}")
    if not s["steady_state"]: sys.exit(f"FAIL: no steady state: {s['steady_state_note']}")
PY
echo "ok: a host 2 s ahead is caught by check and run, and --allow-offset starts both instances together"
