#!/bin/sh
# A TCP ceiling is kept counted from the sender's start, as iperf's -b: when the left-out seconds (--omit)
# ran under it, the window after them catches up at up to 1.02x and is no excess. The stall here is a
# SIGSTOP of netload inside the left-out seconds. Arguments: the netload and netserve binaries. Everything
# runs on 127.0.0.1, ports from the kernel.
set -u
netload=$1
netserve=$2
TMP_NAME=netload-omit
. "$(dirname "$0")/netserve_fixture.sh"

# 3 s left out, 2 s measured at 200 Mbit/s: stopped 0.4 s at 1.5 s, the sender is 10 MB behind, which
# takes 20 s at 1.02x to make up.
"$netload" -H 127.0.0.1 -p "$port" -t TCP_STREAM -l 2 --omit 3 --interval 1 --rate 200M -- -m 128K \
  > "$tmp/out" 2> "$tmp/err" &
pid=$!
sleep 1.5
kill -STOP $pid
sleep 0.4
kill -CONT $pid
status=0
wait $pid || status=$?
cat "$tmp/out"
[ "$status" -eq 0 ] || { fail "exit status $status, want 0"; cat "$tmp/err"; }
grep -q "CEILING EXCEEDED" "$tmp/out" && fail "a window catching up on left-out seconds read as an excess"
grep -q "at the ceiling counted from the start (catching up on the left-out seconds)" "$tmp/out" ||
  fail "no catch-up in the measured window: the stop did not land in the left-out seconds"
exit $fails
