#!/bin/sh
# A user's stop of netload (SIGINT, SIGTERM): no traffic after it, the figures measured until then printed
# and in the JSON (marked interrupted, with the seconds measured), sent = received + lost, exit status
# 128 + the signal. Before the start instant: nothing sent at all. Arguments: the netload and netserve
# binaries. Everything runs on 127.0.0.1, ports from the kernel.
set -u
netload=$1
netserve=$2
TMP_NAME=netload-int
. "$(dirname "$0")/netserve_fixture.sh"

# stop NAME SIGNAL AFTER ARGS...: runs netload with ARGS, sends SIGNAL after AFTER seconds; $status, output
# in $tmp/NAME.out / .err, and the seconds from the signal to netload's exit in $took.
stop() {
  name=$1 sig=$2 after=$3
  shift 3
  case $1 in
  --iperf*) "$netload" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" & ;;  # iperf's line names the server
  *) "$netload" -H 127.0.0.1 -p "$port" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" & ;;
  esac
  pid=$!
  sleep "$after"
  signalled=$(date +%s.%N)
  kill -"$sig" $pid
  status=0
  wait $pid || status=$?
  took=$(python3 -c "import time; print(f'{time.time() - $signalled:.2f}')")
}

# check NAME WANT_STATUS MIN_S MAX_S: the JSON result of $tmp/NAME.out (a --json result, or --bidir's two)
# is interrupted by the signal after MIN_S..MAX_S seconds, reconciles, and sent no more than the rate allows.
check() {
  name=$1 want=$2 lo=$3 hi=$4
  [ "$status" -eq "$want" ] || fail "$name: exit status $status, want $want"; cat "$tmp/$name.err"
  python3 - "$tmp/$name.out" "$lo" "$hi" <<'PY' || fail "$name: result"
import json, sys
doc = json.load(open(sys.argv[1]))
lo, hi = float(sys.argv[2]), float(sys.argv[3])
results = [doc["forward"], doc["reverse"]] if doc.get("bidir") else [doc]
for r in results:
    i = r["interrupted"]
    assert r["ok"], r["error"]
    assert i and i["signal"] in ("SIGINT", "SIGTERM"), i
    assert lo <= i["measured_s"] <= hi, f"measured {i['measured_s']} s, want {lo}..{hi}"
    s, rc, lost = r["sender"]["packets"], r["receiver"]["packets"], r["loss"]["packets"]
    if r["test"] == "TCP_STREAM":
        assert r["sender"]["bytes"] == r["receiver"]["bytes"], (r["sender"]["bytes"], r["receiver"]["bytes"])
    else:
        assert s == rc + lost, f"sent {s} != received {rc} + lost {lost}"
        # 1000 pps: what the measured seconds allow (plus one 50-us batch), never the planned 10 s.
        assert 0 < s <= 1000 * i["measured_s"] + 60, f"sent {s} in {i['measured_s']} s at 1000 pps"
    assert r["sender"]["seconds"] <= i["measured_s"] + 0.3, (r["sender"]["seconds"], i["measured_s"])
    print(f"  {r['test']} {'reverse' if r['reverse'] else 'forward'}: measured {i['measured_s']:.2f} s, "
          f"sent {s}, received {rc}, lost {lost}")
PY
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 4 else 1)" "$took" || fail "$name: took ${took}s after the signal"
}

stop fwd INT 1.5 -t UDP_STREAM -l 10 --pps 1000 --json -- -m 64
check fwd 130 1.0 2.5
stop rev TERM 1.5 -t UDP_STREAM -l 10 --pps 1000 --reverse --json -- -m 64
check rev 143 1.0 2.5
stop tcp INT 1.5 -t TCP_STREAM -l 10 --rate 50M --json -- -m 16K
check tcp 130 1.0 2.5
stop bidir INT 1.5 -t UDP_STREAM -l 10 --pps 1000 --bidir --json -- -m 64
check bidir 130 1.0 2.5

# iperf2 -r runs two tests, one after the other: a stop in the first ends the command, no second test.
stop dual INT 1.2 --iperf2 -c 127.0.0.1 -p "$port" -u -b 1000pps -t 4 -r
[ "$status" -eq 130 ] || fail "iperf2 -r: exit status $status, want 130"
[ "$(grep -c '^INTERRUPTED' "$tmp/dual.out")" -eq 1 ] && [ "$(grep -c '^Packets/s' "$tmp/dual.out")" -eq 1 ] ||
  { fail "iperf2 -r: a second test ran after the stop"; cat "$tmp/dual.out"; }

# Stopped after connecting, before the start instant: the sender threads never began; a failure, no figures.
stop early INT 1 -t TCP_STREAM -l 5 --start-at "$(( $(date +%s) + 4 ))" --json -- -m 64K
[ "$status" -eq 130 ] || fail "before the instant: exit status $status, want 130"
python3 - "$tmp/early.out" <<'PY' || fail "before the instant: result"
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["ok"] and "before the start instant: nothing was sent" in r["error"], r["error"]
assert r["interrupted"]["measured_s"] == 0 and r["verdict"] is None and r["sender"]["bytes"] == 0, r
print("  stopped before the instant:", r["error"])
PY

# TCP's rate is a ceiling: a short run, one 1-MiB message under way at its end, is no excess (iperf exits 0).
"$netload" -H 127.0.0.1 -p "$port" -t TCP_STREAM -l 1 --rate 10M -- -m 1M > "$tmp/ceiling.out" 2>&1 ||
  { fail "TCP ceiling: exit status $? for a run under its ceiling"; cat "$tmp/ceiling.out"; }

# The table says what its figures cover.
stop table INT 1.2 -t UDP_STREAM -l 10 --pps 1000 -- -m 64
[ "$status" -eq 130 ] || fail "table: exit status $status, want 130"
grep -q '^INTERRUPTED by SIGINT after 1\.[0-9]* s of 10\.00 s' "$tmp/table.out" || { fail "table: no INTERRUPTED line"; cat "$tmp/table.out"; }
grep -q '^Packets/s' "$tmp/table.out" || fail "table: no figures"

# Before the start instant: connected and armed, then stopped: nothing is ever sent.
mkfifo "$tmp/in"
sleep 30 > "$tmp/in" &
holder=$!
"$netload" -H 127.0.0.1 -p "$port" -t UDP_STREAM -l 10 --pps 1000 --start-on-stdin --json -- -m 64 \
  < "$tmp/in" > "$tmp/pre.out" 2> "$tmp/pre.err" &
pid=$!
for i in $(seq 50); do grep -q 'waiting for the start instant' "$tmp/pre.err" && break; sleep 0.1; done
kill -INT $pid
status=0
wait $pid || status=$?
kill $holder 2>/dev/null
[ "$status" -eq 130 ] || fail "before the start: exit status $status, want 130"
python3 - "$tmp/pre.out" <<'PY' || fail "before the start: result"
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["ok"] and r["interrupted"]["measured_s"] == 0, r
assert r["sender"]["packets"] == 0
print("  before the start: nothing sent:", r["error"])
PY

# netserve: one line per interrupted test with its own counts, and never the parallel wait's wrapper.
sleep 0.5
if grep -q 'multiple exceptions' "$tmp/serve.log"; then fail "netserve logged 'multiple exceptions'"; cat "$tmp/serve.log"; fi
[ "$fails" -eq 0 ] && echo "ok: netload stops keep their figures (forward, reverse, TCP, bidir, table, before the start)"
exit $fails
