#!/bin/bash
# netload --peer iperf3 against a stock `iperf3 -s -J -1` (Debian's /usr/bin/iperf3, or $IPERF3_BIN) on
# 127.0.0.1, on a free port from the kernel: netload exits 0, its JSON reconciles (sent = received + lost),
# and what it says the iperf3 server counted is exactly what the server's own JSON says. Arguments: the
# netload binary and a case:
#   udp        UDP_STREAM at 10 Mbit/s: receiver packets and bytes = the server's end.sum_received
#   udp3       the same with --streams 3 (iperf3 -P 3)
#   udp64      -m 64 (64-bit counts in a small datagram)
#   tcp        TCP_STREAM: receiver bytes = the server's end.sum_received.bytes
#   tcp4       TCP_STREAM --streams 4
#   rudp       --reverse UDP: the server sends; netload's sender figures = the server's end.sum_sent
#   rtcp       --reverse TCP --streams 2: the same in bytes
#   sigint     a 20 s test stopped by SIGINT after 1 s: exit 130 within 3 s, marked interrupted, the
#              server's count kept (equal to its own JSON)
#   refused    --peer iperf3 with UDP_RR and with --bidir: exit 2 and one clear line, before connecting
#   table      the text table says who counted the receiver's figures
#   options    TCP -T ,1 -- --mss 1200 -K cubic -S 256K: iperf3's receiver uses cubic and a 256 KiB window
#   readme     the README's netload --peer iperf3 lines, on loopback (-H 127.0.0.1 -p PORT, -l 1): UDP -m 16
#              at 10 Mbit/s (iperf3's own count, loss and all), and TCP --streams 4 --reverse
#   buffers    the server's socket buffer as its JSON (-J) says (rcvbuf_actual; sndbuf_actual in reverse), in
#              the table and the JSON; without -J, the table says "not reported", never 0
#   dropsplit  in a network namespace of its own (root), unpaced -m 1400 into iperf3 -s -S 4K: its socket
#              drops (the namespace's UdpRcvbufErrors), which iperf3 does not report: netload says the
#              split of the loss is unknown (table, JSON), and gives no verdict of path loss
# Exit 77 (skipped) when no iperf3 is installed (dropsplit: or no network namespace can be made).
set -u
netload=$1
case_name=$2
iperf3=${IPERF3_BIN:-/usr/bin/iperf3}
[ -x "$iperf3" ] || { echo "SKIP: no iperf3 at $iperf3 (Debian package iperf3)"; exit 77; }
tmp=$(mktemp -d /tmp/netload-iperf3-peer.XXXXXX)
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Is a TCP socket listening on 127.0.0.1:PORT? Read from /proc: a probe connection would be the one test
# an iperf3 -s -1 serves.
listening() {
  python3 - "$1" "$2" <<'EOF'
import sys
import os
want = "0100007F:%04X" % int(sys.argv[1])
inodes = {l.split()[9] for l in list(open("/proc/net/tcp"))[1:] if l.split()[1] == want and l.split()[3] == "0A"}
try:  # the listener must be this server's own, not another test's that took the port first
    if open(f"/proc/{sys.argv[2]}/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
        sys.exit(2)
    mine = {os.readlink(f"/proc/{sys.argv[2]}/fd/{fd}") for fd in os.listdir(f"/proc/{sys.argv[2]}/fd")}
except OSError:
    sys.exit(2)  # the server is gone: it could not bind
sys.exit(0 if any(f"socket:[{i}]" in mine for i in inodes) else 1)
EOF
}

# Starts iperf3 -s for one test (-1), JSON to $tmp/server.json, and waits until it listens; "text" as
# the first argument: without -J, its text output to $tmp/server.json.
# A port another test took between free_port and iperf3's bind: another port.
start_iperf3() {
  local json=-J
  [ "${1:-}" = text ] && json=""
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    # shellcheck disable=SC2086
    "$iperf3" -s $json -1 -p "$port" -B 127.0.0.1 > "$tmp/server.json" 2> "$tmp/server.err" &
    server=$!
    for _ in $(seq 50); do
      listening "$port" "$server"
      case $? in 0) return 0 ;; 2) break ;; esac
      sleep 0.1
    done
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
  done
  echo "FAIL: iperf3 -s did not listen"; cat "$tmp/server.err"; exit 1
}

# run ARGS...: netload --peer iperf3 against the server, JSON in $tmp/netload.json; waits for the server's
# JSON (it exits after the test).
run() {
  status=0
  timeout 40 "$netload" --peer iperf3 -H 127.0.0.1 -p "$port" --json "$@" > "$tmp/netload.json" 2> "$tmp/netload.err" || status=$?
  for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
  server=""
}

# check PYTHON-EXPRESSIONS...: each "left == right" holds, with netload's JSON as `n` and the server's as `s`.
check() {
  python3 - "$tmp/netload.json" "$tmp/server.json" "$@" <<'EOF' || { fail "$case_name: netload and iperf3 differ"; cat "$tmp/netload.err"; }
import json, sys
n, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if 'error' in s:
    sys.exit(f"iperf3 server: {s['error']}")
bad = 0
for expr in sys.argv[3:]:
    left, right = expr.split('==', 1)
    a, b = eval(left, {'n': n, 's': s}), eval(right, {'n': n, 's': s})
    print(f"{expr.strip()}: {a} vs {b}")
    bad |= a != b
sys.exit(bad)
EOF
}

# Exit status 4 is netload's pacer missing its target by more than 1 % (a loaded machine, several tests
# at once): no fault of the exchange, whose counts are checked all the same.
expect_ok() {
  [ "$status" -eq 4 ] && { echo "note: exit status 4, the paced target missed:"; cat "$tmp/netload.err"; status=0; }
  [ "$status" -eq 0 ] || { fail "$case_name: netload exit status $status"; cat "$tmp/netload.err" "$tmp/netload.json"; }
}

# The figures netload reports must add up, and name who counted them.
reconciles=("n['ok'] == True" "n['loss']['reconciles'] == True"
            "n['sender']['packets'] == n['receiver']['packets'] + n['loss']['packets']")
# iperf3's receiver says "packets" for the highest count it saw and "lost_packets" for the gaps below it:
# what it received is the difference (equal to "packets" when nothing was lost).
forward_udp=("n['receiver']['packets'] == s['end']['sum_received']['packets'] - s['end']['sum_received']['lost_packets']"
             "n['receiver']['bytes'] == s['end']['sum_received']['bytes']"
             "n['sender']['packets'] >= s['end']['sum']['packets'] == True"
             "n['receiver_counted_by'] == 'iperf3 ' + s['start']['version'].split()[-1]")
forward_tcp=("n['receiver']['bytes'] == s['end']['sum_received']['bytes']" "n['sender']['bytes'] == n['receiver']['bytes']"
             "n['receiver_counted_by'] == 'iperf3 ' + s['start']['version'].split()[-1]")

case "$case_name" in
udp)
  start_iperf3; run -t UDP_STREAM -l 1 --rate 10M; expect_ok
  check "${reconciles[@]}" "${forward_udp[@]}" "n['streams'] == s['start']['test_start']['num_streams']"
  ;;
udp3)
  start_iperf3; run -t UDP_STREAM -l 2 --rate 10M --streams 3; expect_ok
  check "${reconciles[@]}" "${forward_udp[@]}" "len(s['end']['streams']) == 3"
  ;;
udp64)
  start_iperf3; run -t UDP_STREAM -l 1 --pps 2000 -- -m 64; expect_ok
  check "${reconciles[@]}" "${forward_udp[@]}" "s['start']['test_start']['blksize'] == 64"
  ;;
tcp)
  start_iperf3; run -t TCP_STREAM -l 1; expect_ok
  check "${reconciles[@]}" "${forward_tcp[@]}"
  ;;
tcp4)
  start_iperf3; run -t TCP_STREAM -l 1 --streams 4 -- -m 128K; expect_ok
  check "${reconciles[@]}" "${forward_tcp[@]}" "len(s['end']['streams']) == 4" "s['start']['test_start']['blksize'] == 131072"
  ;;
rudp)
  start_iperf3; run -t UDP_STREAM -l 1 --rate 10M --reverse; expect_ok
  check "${reconciles[@]}" "n['sender']['packets'] == s['end']['sum_sent']['packets']" \
    "n['sender']['bytes'] == s['end']['sum_sent']['bytes']" "s['start']['test_start']['reverse'] == 1" \
    "n['receiver']['packets'] > 0 == True"
  ;;
rtcp)
  start_iperf3; run -t TCP_STREAM -l 1 --reverse --streams 2; expect_ok
  check "${reconciles[@]}" "n['sender']['bytes'] == s['end']['sum_sent']['bytes']" \
    "n['receiver']['bytes'] == n['sender']['bytes']" "len(s['end']['streams']) == 2"
  ;;
sigint)
  start_iperf3
  # Not under timeout(1): it passes a SIGINT on to the child and to its process group, a second signal
  # that abandons the test. A watchdog bounds it instead.
  "$netload" --peer iperf3 -H 127.0.0.1 -p "$port" --json -t UDP_STREAM -l 20 --rate 10M \
    > "$tmp/netload.json" 2> "$tmp/netload.err" &
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
  [ "$status" -eq 130 ] || fail "sigint: exit status $status, want 130"
  [ "$took_ms" -le 3000 ] || fail "sigint: netload took $took_ms ms to end after SIGINT"
  for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
  server=""
  check "${reconciles[@]}" "${forward_udp[@]}" "n['interrupted']['signal'] == 'SIGINT'" \
    "n['interrupted']['measured_s'] < 3 == True"
  ;;
refused)
  for args in "-t UDP_RR" "-t TCP_STREAM --bidir"; do
    status=0
    # shellcheck disable=SC2086
    timeout 10 "$netload" --peer iperf3 -H 127.0.0.1 -p 9 $args > "$tmp/out" 2> "$tmp/err" || status=$?
    cat "$tmp/err"
    [ "$status" -eq 2 ] || fail "refused ($args): exit status $status, want 2"
    [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q -- "--peer iperf3: .*iperf3" "$tmp/err" ||
      fail "refused ($args): not one line saying why"
  done
  ;;
table)
  start_iperf3
  status=0
  timeout 40 "$netload" --peer iperf3 -H 127.0.0.1 -p "$port" -t TCP_STREAM -l 1 > "$tmp/out" 2> "$tmp/err" || status=$?
  cat "$tmp/out"
  expect_ok
  grep -q '^Receiver    counted by: iperf3 3\.' "$tmp/out" || fail "table: no 'counted by: iperf3' line"
  ;;
options)
  start_iperf3; run -t TCP_STREAM -l 1 -T ,1 -- --mss 1200 -K cubic -S 256K; expect_ok
  check "${reconciles[@]}" "${forward_tcp[@]}" "s['end']['receiver_tcp_congestion'] == 'cubic'" \
    "s['start']['sock_bufsize'] == 262144"
  ;;
readme)
  start_iperf3; run -t UDP_STREAM -l 1 --rate 10M -- -m 16; expect_ok
  check "${reconciles[@]}" "${forward_udp[@]}"
  start_iperf3; run -t TCP_STREAM -l 1 --streams 4 --reverse; expect_ok
  check "${reconciles[@]}" "n['sender']['bytes'] == s['end']['sum_sent']['bytes']" "len(s['end']['streams']) == 4"
  ;;
buffers)
  start_iperf3; run -t UDP_STREAM -l 1 --rate 10M; expect_ok
  check "n['receiver']['socket_buffer'] == s['start']['rcvbuf_actual']" "n['receiver']['socket_buffer'] > 0 == True"
  start_iperf3; run -t UDP_STREAM -l 1 --rate 10M --reverse; expect_ok
  check "n['sender']['socket_buffer'] == s['start']['sndbuf_actual']" "n['sender']['socket_buffer'] > 0 == True"
  start_iperf3 text
  status=0
  timeout 40 "$netload" --peer iperf3 -H 127.0.0.1 -p "$port" -t UDP_STREAM -l 1 --rate 10M > "$tmp/out" 2> "$tmp/err" || status=$?
  cat "$tmp/out"
  expect_ok
  # The receiver's row: "-" where the size goes, and a line that says why.
  grep -qE '^- +[0-9.]+ +[0-9]+ +[0-9.]+$' "$tmp/out" || fail "buffers: the receiver's row does not show '-'"
  grep -q "^Socket      the receiver's buffer size: not reported by iperf3$" "$tmp/out" ||
    fail "buffers: no line saying the receiver's buffer size was not reported"
  ;;
dropsplit)
  if [ -z "${IPERF3_PEER_NETNS:-}" ]; then  # again, alone in a new network namespace: its UDP counters are the test's
    unshare -n true 2> /dev/null || { echo "SKIP: cannot make a network namespace (needs root)"; exit 77; }
    rm -rf "$tmp"
    trap - EXIT
    exec unshare -n env IPERF3_PEER_NETNS=1 "$0" "$@"
  fi
  ip link set lo up || { fail "dropsplit: cannot bring lo up"; exit 1; }
  start_iperf3; run -t UDP_STREAM -l 1 -- -m 1400 -S 4K; expect_ok
  drops=$(nstat -az UdpRcvbufErrors | awk '$1 == "UdpRcvbufErrors" { print $2 }')
  echo "iperf3's socket dropped ${drops:-?} (UdpRcvbufErrors in this namespace)"
  [ "${drops:-0}" -gt 0 ] || fail "dropsplit: iperf3's socket dropped nothing: no loss to split"
  check "${reconciles[@]}" "n['loss']['packets'] >= $drops == True" \
    "n['receiver']['batching'] == 'iperf3, no drop count'" "n['verdict']['limit'] == 'none'" \
    "'receiver kernel drops unknown' in n['loss']['note'] == True" \
    "'unknown which: the socket\'s own drops are unknown (iperf3 does not report them)' in n['verdict']['text'] == True"
  start_iperf3
  status=0
  timeout 40 "$netload" --peer iperf3 -H 127.0.0.1 -p "$port" -t UDP_STREAM -l 1 -- -m 1400 -S 4K > "$tmp/out" 2> "$tmp/err" || status=$?
  cat "$tmp/out"
  expect_ok
  grep -qE "^Loss        [0-9]+ of [0-9]+ \([0-9.]+ %\): iperf3 does not report its socket's drops: how many the socket dropped and how many the path lost is unknown$" "$tmp/out" ||
    fail "dropsplit: the loss line does not say the split is unknown"
  grep -q "^Limit       no verdict: .* on the path or in the receiving socket, unknown which" "$tmp/out" ||
    fail "dropsplit: the limit line does not say where the loss was is unknown"
  grep -q "lost on the path\|path loss" "$tmp/out" && fail "dropsplit: the path is blamed"
  ;;
*)
  echo "unknown case $case_name"; exit 2
  ;;
esac
exit $fails
