#!/bin/bash
# Stock netperf 2.7 against netserve, and netload --peer netserver against a stock netserver, on 127.0.0.1
# with ports from the kernel. Arguments: the netserve binary, a case, the netload binary:
#   seed      the seed's line, netperf -t UDP_STREAM -l 3 -- -m 1: netperf's table, its receiver's messages
#             exactly netserve's logged count
#   udp1400   UDP_STREAM -m 1400 with -s/-S 1M: the same, and bytes = 1400 x messages
#   tcp       TCP_STREAM: netperf's REMOTE_BYTES_RECVD (-k) is netserve's logged bytes
#   udp_rr    UDP_RR -r 32,64: transactions reported, netperf's remote calls are netserve's
#   tcp_rr    TCP_RR -r 1,1024: the same
#   two       two netperf UDP_STREAM clients at once on one netserve port: each is one of netserve's lines
#   refused   TCP_MAERTS (netserve does not send): netperf's own "remote error", at once; then a test runs
#   not_omni  a request netperf does not send as OMNI (-t REM_CPU, type 5): refused, netserve keeps
#             running, and a test after it is served
#   vanish    a netperf killed (SIGKILL) 1 s into a 20-s UDP_STREAM: netserve ends the test when its control
#             connection closes (logged within ~2 s of the start, not at 20 + 4 s), and serves the next one
#   limits    netserve's limits apply: with one test slot per port a second netperf (another address) hears
#             "remote error 16", and so does a third from the first one's address (its one netperf connection)
#   peer_udp  netload --peer netserver -t UDP_STREAM against a stock netserver: paced (-S 4M), nothing lost, the
#             receiver's figures are netserver's and equal the sender's; unpaced, bytes = 1400 x messages
#   peer_tcp  the same with TCP_STREAM: netserver's bytes are every byte netload sent
#   peer_self netload --peer netserver against netserve: the receiver's figures netload prints are the
#             ones netserve logs (both sides of the codec, one count)
#   stall     netload --peer netserver against a server that accepts, then answers a byte a second: with
#             --connect-timeout 1 netload gives up in about 1 s (exit 1, saying so), however long it trickles
#   sigint    netload --peer netserver, a paced 10 s UDP_STREAM stopped by SIGINT after 1 s: exit 130 within
#             2 s, marked interrupted, sent = received + lost, netserver's count is every datagram sent,
#             and no more were sent than the pace allows until the signal (none after it)
# NETPERF_BIN / NETSERVER_BIN name the stock programs (else the *_CONFIGURED copies ctest passes, else
# netperf / netserver on PATH). Exit 77
# (skipped) when the case's program is not there.
set -u
netserve=$1
case_name=$2
netload=${3:-}
netperf=${NETPERF_BIN:-${NETPERF_BIN_CONFIGURED:-$(command -v netperf || true)}}
netserver=${NETSERVER_BIN:-${NETSERVER_BIN_CONFIGURED:-$(command -v netserver || true)}}
case "$case_name" in
stall) ;;
peer_* | sigint) [ -n "$netserver" ] && [ -x "$netserver" ] ||
  { echo "SKIP: no stock netserver (set NETSERVER_BIN or put netperf 2.7's netserver on PATH)"; exit 77; } ;;
esac
case "$case_name" in
peer_udp | peer_tcp | sigint | stall) ;;
*) [ -n "$netperf" ] && [ -x "$netperf" ] ||
  { echo "SKIP: no stock netperf (set NETPERF_BIN or put netperf 2.7 on PATH)"; exit 77; } ;;
esac
tmp=$(mktemp -d /tmp/netserve-netperf.XXXXXX)
server=""
# A stock netserver forks a child per test, which outlives its parent killed mid-test: each server runs in a
# session (and process group) of its own, and the group is killed.
trap '[ -n "$server" ] && { kill -- -$server || kill $server; } 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }

start_netserve() {
  "$netserve" -p 0 --bind 127.0.0.1 "$@" > "$tmp/ready" 2> "$tmp/serve.log" &
  server=$!
  for _ in $(seq 50); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
  port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0])' "$tmp/ready") ||
    { echo "FAIL: netserve did not start"; cat "$tmp/serve.log"; exit 1; }
}

start_netserver() {
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  setsid "$netserver" -D -4 -L 127.0.0.1 -p "$port" > "$tmp/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 50); do python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' "$port" 2>/dev/null && break; sleep 0.1; done
}

# np NAME ARGS...: the stock netperf against the port; its output in $tmp/NAME.out, failing on its error.
np() {
  name=$1
  shift
  status=0
  timeout 40 "$netperf" -H 127.0.0.1 -p "$port" "$@" > "$tmp/$name.out" 2>&1 || status=$?
  cat "$tmp/$name.out"
  [ "$status" -eq 0 ] || fail "$name: netperf exit status $status"
}

# check NAME PYTHON: runs PYTHON with o = netperf's output of NAME, k = its -k KEY=VALUE lines,
# rx = the messages its UDP_STREAM table says the receiver counted, and logs = netserve's netperf lines
# (their key=value fields); the script exits non-zero for a failed check.
check() {
  name=$1
  python3 - "$tmp/$name.out" "$tmp/serve.log" "$2" <<'EOF' || fail "$name: netperf's figures and netserve's differ"
import re, sys
o = open(sys.argv[1]).read()
k = dict(re.findall(r'^([A-Z_]+)=(\S+)$', o, re.M))
rows = [l.split() for l in o.splitlines() if re.match(r'^\s*\d+\s+[\d.]', l)]
rx = int(rows[1][2]) if len(rows) >= 2 and len(rows[1]) == 4 else None
def fields(line):
    return {a: int(b) if b.isdigit() else b for a, b in re.findall(r'(\w+)=([^\s:]+)', line)}
logs = [fields(l) for l in open(sys.argv[2]) if 'client=netperf 2.7' in l]
print("netperf:", {"rx": rx, **k}, "\nnetserve:", logs)
exec(sys.argv[3])
EOF
}

case "$case_name" in
seed)
  start_netserve
  np seed -t UDP_STREAM -l 3 -- -m 1
  grep -q 'Okay Errors   Throughput' "$tmp/seed.out" || fail "no netperf UDP_STREAM table"
  check seed "assert len(logs) == 1 and rx == logs[0]['packets'] and logs[0]['bytes'] == rx, 'receiver count'"
  ;;
udp1400)
  start_netserve
  np udp1400 -t UDP_STREAM -l 2 -- -m 1400 -s 1M -S 1M
  check udp1400 "assert len(logs) == 1 and rx == logs[0]['packets'] and logs[0]['bytes'] == 1400 * rx, 'receiver count'"
  ;;
tcp)
  start_netserve
  np tcp -t TCP_STREAM -l 2 -- -k LOCAL_BYTES_SENT,REMOTE_BYTES_RECVD,REMOTE_RECV_CALLS
  check tcp "assert len(logs) == 1 and int(k['REMOTE_BYTES_RECVD']) == logs[0]['bytes'] > 0 and int(k['REMOTE_RECV_CALLS']) == logs[0]['packets']"
  ;;
udp_rr | tcp_rr)
  start_netserve
  test=UDP_RR sizes=32,64
  [ "$case_name" = tcp_rr ] && test=TCP_RR sizes=1,1024
  np rr -t $test -l 2 -- -r $sizes
  grep -q 'Trans.' "$tmp/rr.out" || fail "no netperf RR table"
  np rrk -t $test -l 1 -- -r $sizes -k TRANSACTION_RATE,REMOTE_RECV_CALLS,REMOTE_SEND_CALLS
  check rrk "assert len(logs) == 2 and float(k['TRANSACTION_RATE']) > 0 and logs[1]['transactions'] > 0 and \\
    int(k['REMOTE_SEND_CALLS']) == logs[1]['answers'] and int(k['REMOTE_RECV_CALLS']) == logs[1]['packets']"
  ;;
two)
  start_netserve
  for i in 1 2; do
    timeout 40 "$netperf" -H 127.0.0.1 -p "$port" -t UDP_STREAM -l 3 -- -m 1400 > "$tmp/c$i.out" 2>&1 &
    eval "pid$i=$!"
  done
  wait "$pid1" || fail "client 1: exit status $?"
  wait "$pid2" || fail "client 2: exit status $?"
  cat "$tmp/c1.out" "$tmp/c2.out"
  python3 - "$tmp" <<'EOF' || fail "the two clients' receiver counts are not netserve's two lines"
import re, sys
d = sys.argv[1]
def rx(name):
    rows = [l.split() for l in open(f"{d}/{name}.out") if re.match(r'^\s*\d+\s+[\d.]', l)]
    return int(rows[1][2])
clients = sorted([rx("c1"), rx("c2")])
logged = sorted(int(x) for x in re.findall(r'UDP_STREAM forward .* received packets=(\d+) .*client=netperf 2.7', open(f"{d}/serve.log").read()))
print("clients:", clients, "netserve:", logged)
sys.exit(clients != logged or len(logged) != 2)
EOF
  ;;
refused)
  start_netserve
  begin=$(date +%s)
  status=0
  timeout 20 "$netperf" -H 127.0.0.1 -p "$port" -t TCP_MAERTS -l 2 > "$tmp/maerts.out" 2>&1 || status=$?
  cat "$tmp/maerts.out"
  [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "TCP_MAERTS: exit status $status, want netperf's remote error"
  grep -q 'netperf: remote error 95' "$tmp/maerts.out" || fail "no 'remote error 95' (EOPNOTSUPP) from netperf"
  [ $(($(date +%s) - begin)) -le 3 ] || fail "the refusal took more than 3 s"
  grep -q 'netperf test from 127.0.0.1 refused: direction' "$tmp/serve.log" || fail "netserve did not log the refusal"
  np after -t TCP_STREAM -l 1 -- -k REMOTE_BYTES_RECVD
  check after "assert len(logs) == 1 and int(k['REMOTE_BYTES_RECVD']) == logs[0]['bytes'] > 0"
  ;;
not_omni)
  start_netserve
  timeout 20 "$netperf" -H 127.0.0.1 -p "$port" -t REM_CPU > "$tmp/remcpu.out" 2>&1
  cat "$tmp/remcpu.out"
  sleep 0.3
  kill -0 "$server" 2>/dev/null || fail "netserve died after a REM_CPU request"
  grep -q 'refused: request type 5' "$tmp/serve.log" || fail "netserve did not log the refusal"
  np after -t TCP_STREAM -l 1 -- -k REMOTE_BYTES_RECVD
  check after "assert len(logs) == 1 and int(k['REMOTE_BYTES_RECVD']) == logs[0]['bytes'] > 0"
  ;;
vanish)
  start_netserve --max-tests-per-port 1
  "$netperf" -H 127.0.0.1 -p "$port" -t UDP_STREAM -l 20 -- -m 100 > /dev/null 2>&1 &
  victim=$!
  sleep 1
  kill -9 $victim
  for _ in $(seq 50); do grep -q 'client=netperf' "$tmp/serve.log" && break; sleep 0.1; done
  grep 'client=netperf' "$tmp/serve.log" || fail "netserve still holds the test of a netperf that is gone"
  python3 - "$tmp/serve.log" <<'EOF' || fail "the test was not ended when its client went"
import re, sys
seconds = [float(x) for x in re.findall(r'seconds=([0-9.]+)', open(sys.argv[1]).read())]
print("the vanished client's test lasted", seconds, "s")
sys.exit(not (len(seconds) == 1 and seconds[0] < 5))
EOF
  np after -t TCP_STREAM -l 1 -- -k REMOTE_BYTES_RECVD  # its one slot is free again
  check after "assert int(k['REMOTE_BYTES_RECVD']) > 0"
  ;;
limits)
  start_netserve --max-tests-per-port 1
  timeout 40 "$netperf" -H 127.0.0.1 -p "$port" -t UDP_STREAM -l 3 -- -m 1400 > "$tmp/first.out" 2>&1 &
  first=$!
  sleep 1
  # From another address (-L: the control connection's local end): the port's one test slot is taken.
  status=0
  timeout 20 "$netperf" -H 127.0.0.1 -L 127.0.0.2 -p "$port" -t TCP_STREAM -l 1 > "$tmp/second.out" 2>&1 || status=$?
  cat "$tmp/second.out"
  [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "the second client: exit status $status, want a remote error"
  grep -q 'netperf: remote error 16' "$tmp/second.out" || fail "the second client was not told EBUSY"
  grep -q "netperf test from 127.0.0.2 refused: port $port already runs 1 tests" "$tmp/serve.log" || fail "netserve did not log why"
  # From the first one's address: its share of netperf control connections (one per test slot it may hold).
  status=0
  timeout 20 "$netperf" -H 127.0.0.1 -p "$port" -t TCP_STREAM -l 1 > "$tmp/third.out" 2>&1 || status=$?
  cat "$tmp/third.out"
  grep -q 'netperf: remote error 16' "$tmp/third.out" || fail "the third client was not told EBUSY"
  grep -q "netperf connection from 127.0.0.1 refused: 1 netperf connections from this client already" "$tmp/serve.log" ||
    fail "netserve did not log why"
  wait $first || fail "the first client failed"
  cat "$tmp/first.out"
  check first "assert len(logs) == 1 and rx == logs[0]['packets']"
  ;;
peer_udp | peer_tcp | peer_self)
  if [ "$case_name" = peer_self ]; then start_netserve; else start_netserver; fi
  # run NAME ARGS...: netload's JSON result in $tmp/NAME.json
  run() {
    name=$1
    shift
    status=0
    timeout 40 "$netload" --peer netserver -H 127.0.0.1 -p "$port" --json "$@" > "$tmp/$name.json" 2> "$tmp/netload.err" || status=$?
    [ "$status" -eq 0 ] || { fail "netload $*: exit status $status"; cat "$tmp/netload.err"; }
  }
  # result FILE PYTHON: r = netload's JSON result, logs = netserve's netperf lines (peer_self)
  result() {
    python3 - "$tmp/$1" "$tmp/serve.log" "$2" <<'EOF' || fail "$1: the receiver's figures are not the peer's"
import json, re, sys
r = json.load(open(sys.argv[1]))
logs = [dict(re.findall(r'(\w+)=([^\s:]+)', l)) for l in open(sys.argv[2]) if 'client=netperf 2.7' in l]
s, x = r['sender'], r['receiver']
print("sender:", s['packets'], s['bytes'], "receiver:", x['packets'], x['bytes'], "counted by:", r.get('receiver_counted_by'))
assert r['ok'] and r['receiver_counted_by'] == 'netserver 2.7'
exec(sys.argv[3])
EOF
  }
  if [ "$case_name" = peer_tcp ]; then
    run tcp -t TCP_STREAM -l 2
    result tcp.json "assert x['bytes'] == s['bytes'] > 0, 'TCP: netserver received every byte'"
  else
    # -S 4M: a receiver descheduled for a moment on a loaded machine must not drop (rmem_max permitting).
    run paced -t UDP_STREAM -l 2 --pps 5000 -- -m 1400 -S 4M
    result paced.json "assert x['packets'] == s['packets'] > 9000 and x['bytes'] == 1400 * x['packets'], 'paced: nothing lost'"
    run unpaced -t UDP_STREAM -l 2 -- -m 1400
    result unpaced.json "assert 0 < x['packets'] <= s['packets'] and x['bytes'] == 1400 * x['packets']"
    if [ "$case_name" = peer_self ]; then
      result unpaced.json "assert int(logs[-1]['packets']) == x['packets'] and int(logs[-1]['bytes']) == x['bytes'], 'netserve logged another count'"
    fi
  fi
  ;;
stall)
  # A control connection that never completes an answer: one byte a second for 20 s, then the close.
  python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True)
c, _ = s.accept(); c.recv(4096)
for _ in range(20):
    c.send(b"\0"); time.sleep(1)
' > "$tmp/port" &
  server=$!
  for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  begin=$(date +%s%N)
  status=0
  timeout 40 "$netload" --peer netserver -H 127.0.0.1 -p "$(cat "$tmp/port")" --connect-timeout 1 -t UDP_STREAM -l 1 \
    > /dev/null 2> "$tmp/netload.err" || status=$?
  took_ms=$((($(date +%s%N) - begin) / 1000000))
  cat "$tmp/netload.err"
  echo "exit $status after $took_ms ms"
  [ "$status" -eq 1 ] || fail "stall: exit status $status, want 1"
  [ "$took_ms" -le 3000 ] || fail "stall: netload waited $took_ms ms for an answer, want about 1 s"
  grep -q "timed out after 1 s waiting for its answer" "$tmp/netload.err" || fail "stall: no line saying it timed out"
  ;;
sigint)
  start_netserver
  # Not under timeout(1): it passes a SIGINT on to the child and to its process group, a second signal
  # that abandons the test. A watchdog bounds it instead.
  "$netload" --peer netserver -H 127.0.0.1 -p "$port" --json -t UDP_STREAM -l 10 --pps 2000 -- -m 1400 \
    > "$tmp/sigint.json" 2> "$tmp/netload.err" &
  client=$!
  (sleep 40; kill -9 $client) > /dev/null 2>&1 &  # not the test's output, which ctest waits on
  watchdog=$!
  sleep 1
  stopped=$(date +%s%N)
  kill -INT $client
  status=0
  wait $client || status=$?
  took_ms=$((($(date +%s%N) - stopped) / 1000000))
  kill $watchdog 2>/dev/null
  echo "exit $status, ${took_ms} ms after SIGINT"
  cat "$tmp/netload.err"
  [ "$status" -eq 130 ] || fail "sigint: exit status $status, want 130"
  [ "$took_ms" -le 2000 ] || fail "sigint: netload took $took_ms ms to end after SIGINT"
  python3 - "$tmp/sigint.json" "$stopped" <<'EOF' || fail "sigint: the interrupted result is not what was sent and counted"
import json, sys
r = json.load(open(sys.argv[1]))
stopped = int(sys.argv[2]) / 1e9
s, x, i = r['sender'], r['receiver'], r.get('interrupted')
print("interrupted:", i, "sender:", s['packets'], "receiver:", x['packets'], "lost:", r['loss']['packets'],
      "counted by:", r.get('receiver_counted_by'), "started", round(stopped - r['actual_start'], 3), "s before the signal")
assert i and i['signal'] == 'SIGINT' and i['planned_s'] == 10 and 0.5 < i['measured_s'] < 2, 'interrupted'
assert r['ok'] and r['loss']['reconciles'] and s['packets'] == x['packets'] + r['loss']['packets'], 'reconciles'
assert r['receiver_counted_by'] == 'netserver 2.7' and x['packets'] == s['packets'] > 500, "netserver's count"
# At 2000 pps nothing beyond the pace until the signal (with a batch's slack): nothing left after it.
assert s['packets'] <= 2000 * (stopped - r['actual_start']) + 64, 'datagrams after the signal'
EOF
  ;;
*)
  echo "unknown case $case_name"
  exit 2
  ;;
esac
[ "$fails" -eq 0 ] || { echo "--- the server's log"; cat "$tmp/serve.log"; }
exit $fails
