#!/bin/sh
# One instance that starts after T0 + the start-skew bound marks its run, it does not void it. A plan of two
# instances on 127.0.0.x: host b's netload runs behind a wrapper (b's own bin_dir) that stops it with
# SIGSTOP from 0.3 s before the start instant the harness gives it until 0.25 s after, so it starts ~250 ms
# after T0 against a bound of 20 ms. Checked: `harness run` exits 5 (skewed) and says which instance was
# late on stderr; summary.json has the run summed over both instances (b's figures counted), "status":
# "skewed" and b's offset, and a steady state without b's first and last samples (it was not sending
# through the first; its sender ran 250 ms past the last, which the receiver's samples do not hold), so
# with no loss in it but what is in flight at a boundary; summary.csv has its SUM row; report.md and report.html say SKEWED and name b;
# the results database records the folder and the run as skewed, `harness history` names b, and `harness
# db baseline` refuses the folder; `harness report` rebuilds the same and exits 5 too.
# Runs are 3 s on 127.0.0.x with free ports; nothing leaves loopback.
set -eu
harness=$1
build=$2
tmp=$(mktemp -d /tmp/harness-late.XXXXXX)
cleanup() { [ -n "${KEEP:-}" ] || rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && cat "$tmp/err"; exit 1; }

mkdir "$tmp/late-bin"
cat > "$tmp/late-bin/netload" <<WRAPPER
#!/usr/bin/env python3
# The real netload, held stopped around the start instant it reads on stdin (--start-on-stdin): the
# harness's start barrier, and T0, as usual; only this process is not scheduled at T0.
import os, signal, subprocess, sys, threading, time
real = "$build/netload/netload"
if "--start-on-stdin" not in sys.argv:
    os.execv(real, [real] + sys.argv[1:])
child = subprocess.Popen([real] + sys.argv[1:], stdin=subprocess.PIPE)
def hold(t0):
    time.sleep(max(0.0, t0 - 0.3 - time.time()))
    os.kill(child.pid, signal.SIGSTOP)
    time.sleep(max(0.0, t0 + 0.25 - time.time()))
    os.kill(child.pid, signal.SIGCONT)
def forward():
    held = None
    for line in iter(sys.stdin.buffer.readline, b""):
        child.stdin.write(line)
        child.stdin.flush()
        if held is None:
            held = threading.Thread(target=hold, args=(float(line.split()[0]),), daemon=True)
            held.start()
    child.stdin.close()
threading.Thread(target=forward, daemon=True).start()
status = child.wait()
os._exit(status if status >= 0 else 128 - status)
WRAPPER
chmod +x "$tmp/late-bin/netload"

cat > "$tmp/late.toml" <<PLAN
name = "late"
[defaults]
duration = 3
warmup = 0
lead = 1.0
settle = 0.2
skew_bound_ms = 20
ports = [0, 0]
[hosts]
device = { address = "127.0.0.1" }
a = { address = "127.0.0.2" }
b = { address = "127.0.0.3", bin_dir = "$tmp/late-bin" }
[[tests]]
name = "t"
message_size = 64
pps = 1000
topology = "fan-in"
server = "device"
clients = ["a", "b"]
PLAN

status=0
"$harness" run "$tmp/late.toml" --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" ||
  status=$?
[ "$status" = 5 ] || { cat "$tmp/out"; fail "expected exit status 5 (a run skewed), got $status"; }
grep -q "^harness: run t-m64 skewed: .*b started [0-9.]* ms after T0" "$tmp/err" ||
  fail "stderr does not say that b started late"
dir=$(ls -d "$tmp"/results/late-*)

python3 - "$dir" <<'PY' || fail "summary.json / summary.csv do not record the skewed run"
import csv, json, sys
d = sys.argv[1]
[run] = json.load(open(d + "/summary.json"))["runs"]
assert run["status"] == "skewed", run.get("status")
assert run["ok"] and not run["failures"], (run["ok"], run["failures"])
inst = {i["instance"]: i for i in run["instances"]}
assert set(inst) == {"01-a", "02-b"}, inst.keys()
b = inst["02-b"]
assert b["ok"] and b["late"] and b["start_offset_ms"] >= 150, b
skew = run["skew"]
assert skew["bound_ms"] == 20, skew
late = {l["instance"]: l["start_offset_ms"] for l in skew["late"]}
assert "02-b" in late and late["02-b"] == b["start_offset_ms"], late
sent = sum(i["sender"]["packets"] for i in inst.values())
received = sum(i["receiver"]["packets"] for i in inst.values())
assert b["sender"]["packets"] > 0 and run["sum"]["sender"]["packets"] == sent, (run["sum"], sent)
assert run["sum"]["receiver"]["packets"] == received, (run["sum"], received)
steady = run["steady_state"]
assert steady and steady["slots"] == 1, (steady, run["steady_state_note"])
# Only what is in flight at a sample's boundary: b's last sample would add its 250-ms tail (~250 packets).
assert abs(steady["sender"]["packets"] - steady["receiver"]["packets"]) <= 20, steady
rows = [r for r in csv.DictReader(open(d + "/summary.csv")) if r["run"] == "t-m64"]
[total] = [r for r in rows if r["instance"] == "SUM"]
assert int(total["sent_packets"]) == sent, total
print(f"ok: summed {sent} sent, {received} received over both instances; b started {b['start_offset_ms']:.1f} ms "
      f"after T0 (bound {skew['bound_ms']} ms)")
PY
for f in report.md report.html; do
  grep -q "SKEWED" "$dir/$f" || fail "$f does not say SKEWED"
  grep -q "02-b started [0-9.]* ms after T0" "$dir/$f" || fail "$f does not say which instance was late"
done

db=$tmp/results/netbench.sqlite
python3 - "$db" <<'PY' || fail "the results database does not record the run as skewed"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
[(status,)] = db.execute("SELECT status FROM folders").fetchall()
assert status == "skewed", status
[(ok, skew, pps)] = db.execute("SELECT ok, skew, received_pps FROM runs").fetchall()
assert ok == 1 and pps > 0 and "02-b" in skew, (ok, skew, pps)
PY
"$harness" history --db "$db" --plan late > "$tmp/h.txt" || fail "harness history"
grep -q "skewed" "$tmp/h.txt" && grep -q "02-b started [0-9.]* ms after T0" "$tmp/h.txt" ||
  { cat "$tmp/h.txt"; fail "history does not say which instance was late"; }
"$harness" history --db "$db" --plan late --json > "$tmp/h.json"
python3 - "$tmp/h.json" <<'PY' || fail "history --json does not flag the run"
import json, sys
[s] = json.load(open(sys.argv[1]))["series"]
[p] = s["points"]
[r] = p["runs"]
assert p["status"] == "skewed" and r["ok"] and "02-b" in r["skew"] and r["received_pps"] > 0, p
PY
# Judged, but never a baseline: its figures stand, its instances did not all start at T0.
status=0
"$harness" db baseline "$dir" --db "$db" > /dev/null 2> "$tmp/err" || status=$?
[ "$status" = 1 ] && grep -q "is skewed (run t-m64 skewed: 02-b started" "$tmp/err" ||
  fail "db baseline of the skewed folder: exit status $status"

status=0
"$harness" report "$dir" > "$tmp/out" 2> "$tmp/err" || status=$?
[ "$status" = 5 ] || fail "harness report on the skewed run exited $status, not 5"
grep -q "^harness: run t-m64 skewed: " "$tmp/err" || fail "harness report does not name the skewed run"
echo "ok: the late instance is recorded, summed and flagged; exit status 5"
cat "$tmp/h.txt"
