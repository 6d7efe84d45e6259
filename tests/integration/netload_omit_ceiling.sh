#!/bin/sh
# A TCP ceiling is kept counted from the sender's start, as iperf's -b: when the left-out seconds (--omit)
# ran under it, the window after them makes up for it at up to 1.02x and is no excess. The stall here is a
# SIGSTOP of netload inside the left-out seconds. Arguments: the netload and netserve binaries. Everything
# runs on 127.0.0.1, ports from the kernel.
set -u
netload=$1
netserve=$2
TMP_NAME=netload-omit
. "$(dirname "$0")/netserve_fixture.sh"

# 3 s left out, 4 s measured at 200 Mbit/s: stopped 0.6 s at 1.5 s, the sender is 15 MB behind, which
# takes 30 s at 1.02x to make up, so the whole window is above the rate (before the fix: CEILING EXCEEDED).
"$netload" -H 127.0.0.1 -p "$port" -t TCP_STREAM -l 4 --omit 3 --interval 1 --rate 200M --json -- -m 128K \
  > "$tmp/out" 2> "$tmp/err" &
pid=$!
sleep 1.5
kill -STOP $pid
sleep 0.6
kill -CONT $pid
status=0
wait $pid || status=$?
cat "$tmp/err"
[ "$status" -eq 0 ] || fail "exit status $status, want 0"
python3 - "$tmp/out" <<'PY' || fail "result"
import json, sys
r = json.load(open(sys.argv[1]))
t, window, whole = r["target"], r["sender"]["bytes"], r["omit"]["sent_bytes"]
left_out = whole - window
print(f"  left out {left_out} bytes in 3 s, window {window} bytes in {r['sender']['seconds']:.2f} s "
      f"({t['error_percent']:+.2f} %), met {t['met']}")
assert t["ceiling"] and t["met"], t
assert r["loss"]["reconciles"], r["loss"]
# The stop landed in the left-out seconds: they carried clearly less than 3 s at 25 MB/s.
assert left_out < 0.9 * 25e6 * 3, f"left out {left_out} bytes: the stop missed the left-out seconds"
# Above the rate in the window, which the old window-only check called an excess.
assert t["error_percent"] > 0, t
PY
exit $fails
