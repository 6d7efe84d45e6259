#!/bin/bash
# The stock iperf3 client (Debian's /usr/bin/iperf3, or $IPERF3_BIN) against netserve on 127.0.0.1, a port
# from the kernel: the client exits 0, and what its JSON says the server counted is exactly what netserve's
# log line for the test says. Arguments: the netserve binary and a case:
#   tcp       -P 5, forward: sum_received.bytes
#   udp16     -u -l 16 -b 100m: sum_received.packets and bytes
#   udp1400   -u -l 1400 -b 100m --udp-counters-64bit, two streams: sum_received.packets and bytes
#   reverse   -R, TCP then UDP: what the client says the server sent
#   bidir     --bidir, TCP: both directions
#   refused   an option netserve does not serve (-O): iperf3's own error, at once; netserve serves on
#   keyed     a netserve with --psk-file refuses iperf3 clients at once (they cannot answer its challenge)
#   limits    netserve's limits apply: with one test slot per port a second client is told the server is busy
#   mixed     an iperf3 client and netload (the third argument) at once on one port, both UDP: each counts apart
#   eight     eight clients at once on one port, UDP 10 Mbit/s for 3 s: every one completes and reconciles
#   stock     the same eight against a stock iperf3 -s: it refuses all but one ("the server is busy")
#   seed      the seed procedure's iperf3 client line (-u -l 16 -b 100m -i 1 -A 1), on loopback for 2 s
#             instead of -t 120 to 192.168.100.1 -p 16001, against netserve -p 0 (README "Using the stock tools")
#   hello_flood  another address (127.0.0.2) floods the port with iperf3's UDP hello for 9 s while two
#             `iperf3 -u` runs from 127.0.0.1 complete and reconcile (issue 40, finding 2)
#   dup_cookie   a second iperf3 session with a cookie already in use is refused at once, and with
#             --max-tests-per-port 2 --client-share 1 no third test runs (issue 40, finding 6; no iperf3 needed)
# Exit 77 (skipped) when no iperf3 is installed.
set -u
netserve=$1
case_name=$2
netload=${3:-}
iperf3=${IPERF3_BIN:-/usr/bin/iperf3}
[ "$case_name" = dup_cookie ] || [ -x "$iperf3" ] || { echo "SKIP: no iperf3 at $iperf3 (Debian package iperf3)"; exit 77; }
tmp=$(mktemp -d /tmp/netserve-iperf3.XXXXXX)
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }

start_netserve() {
  "$netserve" -p 0 --bind 127.0.0.1 "$@" > "$tmp/ready" 2> "$tmp/serve.log" &
  server=$!
  for _ in $(seq 50); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
  port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0])' "$tmp/ready") ||
    { echo "FAIL: netserve did not start"; cat "$tmp/serve.log"; exit 1; }
}

# cpu_seconds PID: the process's user + system CPU time so far.
cpu_seconds() {
  python3 -c 'import os,sys; f=open(f"/proc/{sys.argv[1]}/stat").read().rsplit(")",1)[1].split(); print((int(f[11])+int(f[12]))/os.sysconf("SC_CLK_TCK"))' "$1"
}

# client NAME ARGS...: runs the stock client with -J against the port; $status, JSON in $tmp/NAME.json.
client() {
  name=$1
  shift
  status=0
  timeout 30 "$iperf3" -c 127.0.0.1 -p "$port" -J "$@" > "$tmp/$name.json" 2> "$tmp/$name.err" || status=$?
  # -J: a refused or failed test may still exit 0, with an "error" in the JSON.
  if [ "$status" -ne 0 ] || grep -q '"error"' "$tmp/$name.json"; then
    fail "$name: iperf3 exit status $status"
    cat "$tmp/$name.json" "$tmp/$name.err"
  fi
}

# compare NAME LINE PYTHON-EXPRESSIONS...: each "client_expr == log_field" holds, where the client's JSON
# is `j` and netserve's log line number LINE (from 1) among its iperf3 tests is `l` (its key=value fields).
compare() {
  name=$1 line=$2
  shift 2
  python3 - "$tmp/$name.json" "$tmp/serve.log" "$line" "$@" <<'EOF' || fail "$name: the client's figures and netserve's differ"
import json, re, sys
j = json.load(open(sys.argv[1]))
lines = [x for x in open(sys.argv[2]) if ' client=iperf3 ' in x]
n = int(sys.argv[3])
if len(lines) < n:
    sys.exit(f"netserve logged {len(lines)} iperf3 tests, not {n}")
l = dict(re.findall(r'(\w+)=([^\s:]+)', lines[n - 1]))
l = {k: int(v) if v.isdigit() else v for k, v in l.items()}
bad = 0
for check in sys.argv[4:]:
    left, right = check.split('==')
    a, b = eval(left, {'j': j}), eval(right, {'l': l})
    print(f"{check.strip()}: {a} vs {b}")
    bad |= a != b
sys.exit(bad)
EOF
}

case "$case_name" in
tcp)
  start_netserve
  client tcp -t 2 -P 5
  compare tcp 1 "j['end']['sum_received']['bytes'] == l['bytes']" "len(j['end']['streams']) == l['streams']"
  ;;
seed)
  start_netserve
  client seed -u -l 16 -b 100m -t 2 -i 1 -A 1
  compare seed 1 "j['end']['sum_received']['packets'] == l['packets']" "j['end']['sum_received']['bytes'] == l['bytes']"
  ;;
udp16)
  start_netserve
  client udp16 -u -l 16 -b 100m -t 2
  compare udp16 1 "j['end']['sum_received']['packets'] == l['packets']" "j['end']['sum_received']['bytes'] == l['bytes']"
  ;;
udp1400)
  start_netserve
  client udp1400 -u -l 1400 -b 100m -t 2 -P 2 --udp-counters-64bit
  compare udp1400 1 "j['end']['sum_received']['packets'] == l['packets']" "j['end']['sum_received']['bytes'] == l['bytes']" \
    "j['end']['sum_sent']['packets'] - j['end']['sum_received']['lost_packets'] == l['packets']"
  ;;
reverse)
  start_netserve
  client rtcp -R -t 2 -P 2
  compare rtcp 1 "j['end']['sum_sent']['bytes'] == l['bytes']"
  client rudp -R -u -l 1400 -b 50m -t 2
  # (What the client lost is its own socket's: on a loaded machine its 212 KB buffer overflows now and then.)
  compare rudp 2 "j['end']['sum_sent']['packets'] == l['packets']" "j['end']['sum_sent']['bytes'] == l['bytes']"
  ;;
bidir)
  start_netserve
  client bidir --bidir -t 2
  compare bidir 1 "j['end']['sum_received']['bytes'] == l['bytes']"
  compare bidir 2 "j['end']['sum_sent_bidir_reverse']['bytes'] == l['bytes']"
  ;;
refused)
  start_netserve
  begin=$(date +%s)
  status=0
  timeout 20 "$iperf3" -c 127.0.0.1 -p "$port" -t 2 -O 1 > "$tmp/omit.out" 2>&1 || status=$?
  cat "$tmp/omit.out"
  [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "iperf3 -O: exit status $status, want iperf3's error"
  grep -q 'not implemented' "$tmp/omit.out" || fail "iperf3 -O: no 'not implemented' error from the client"
  [ $(($(date +%s) - begin)) -le 5 ] || fail "iperf3 -O: the refusal took more than 5 s"
  grep -q 'iperf3 test from 127.0.0.1 refused: --omit' "$tmp/serve.log" || fail "netserve did not log the refusal"
  client after -t 1
  compare after 1 "j['end']['sum_received']['bytes'] == l['bytes']"
  ;;
keyed)
  (umask 077 && openssl rand -hex 32 > "$tmp/key")
  start_netserve --psk-file "$tmp/key"
  begin=$(date +%s)
  status=0
  timeout 20 "$iperf3" -c 127.0.0.1 -p "$port" -t 1 > "$tmp/keyed.out" 2>&1 || status=$?
  cat "$tmp/keyed.out"
  [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "iperf3 against a keyed netserve: exit status $status"
  [ $(($(date +%s) - begin)) -le 3 ] || fail "the refusal took more than 3 s"
  grep -q 'test authorization failed' "$tmp/keyed.out" || fail "iperf3 did not hear its own refusal"
  grep -q 'an iperf3 client, and this netserve requires a key' "$tmp/serve.log" || fail "netserve did not log why"
  ;;
limits)
  start_netserve --max-tests-per-port 1
  timeout 30 "$iperf3" -c 127.0.0.1 -p "$port" -u -b 1m -t 3 -J > "$tmp/first.json" 2>&1 &
  first=$!
  sleep 1
  timeout 30 "$iperf3" -c 127.0.0.1 -p "$port" -t 1 -J > "$tmp/second.json" 2>&1
  grep -q '"error":.*"the server is busy running a test. try again later"' "$tmp/second.json" ||
    fail "the second client was not told the server is busy"
  grep -q "iperf3 test from 127.0.0.1 refused: port $port already runs 1 tests" "$tmp/serve.log" ||
    fail "netserve did not log why"
  wait $first || fail "the first client failed"
  compare first 1 "j['end']['sum_received']['packets'] == l['packets']"
  ;;
mixed)
  start_netserve
  "$netload" -H 127.0.0.1 -p "$port" -t UDP_STREAM -l 3 --rate 20M --json -- -m 1400 > "$tmp/netload.json" 2> "$tmp/netload.err" &
  netload_pid=$!
  client mixed -u -b 20m -l 1400 -t 2
  status=0
  wait $netload_pid || status=$?
  # 4 is netload's "paced target missed" (this 2-core machine shares its CPU with the other tests): a note;
  # what this case checks is that each client's count is netserve's.
  case $status in
  0) ;;
  4) echo "note: netload missed its paced target: $(grep -m1 'target' "$tmp/netload.err")" ;;
  *) fail "netload: exit status $status"; cat "$tmp/netload.err" ;;
  esac
  compare mixed 1 "j['end']['sum_received']['packets'] == l['packets']"
  # netload's test is the other line: its own JSON's receiver count is netserve's.
  python3 - "$tmp/netload.json" "$tmp/serve.log" <<'EOF' || fail "netload's count is not netserve's"
import json, re, sys
r = json.load(open(sys.argv[1]))
lines = [l for l in open(sys.argv[2]) if ' test ' in l and 'client=' not in l]
got = [int(x) for x in re.findall(r'received packets=(\d+)', ''.join(lines))]
print("netload's receiver:", r['receiver']['packets'], "netserve:", got)
sys.exit(got != [r['receiver']['packets']])
EOF
  ;;
eight | stock)
  if [ "$case_name" = stock ]; then
    # A port the kernel just gave out and took back: iperf3 -s binds a number it is told.
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$iperf3" -s -B 127.0.0.1 -p "$port" > "$tmp/serve.log" 2>&1 &
    server=$!
    sleep 0.5
  else
    start_netserve
  fi
  pids=""
  for i in 1 2 3 4 5 6 7 8; do
    timeout 30 "$iperf3" -c 127.0.0.1 -p "$port" -u -b 10m -l 1400 -t 3 -J > "$tmp/c$i.json" 2> "$tmp/c$i.err" &
    pids="$pids $!"
  done
  # iperf3 -J exits 0 when the server refuses it: its JSON's "error" says so.
  ok=0 i=0
  for pid in $pids; do
    i=$((i + 1))
    wait "$pid" || echo "client $i: exit status $?"
    error=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("error", ""))' "$tmp/c$i.json" 2>&1)
    if [ -z "$error" ]; then ok=$((ok + 1)); else echo "client $i: $error"; fi
  done
  echo "$ok of 8 clients completed"
  if [ "$case_name" = stock ]; then
    [ "$ok" -lt 8 ] || fail "the stock iperf3 -s ran eight tests at once"
    grep -l 'the server is busy' "$tmp"/c*.json > /dev/null || fail "no client was told the server is busy"
  else
    [ "$ok" -eq 8 ] || fail "$ok of 8 clients completed"
    # Each client's received packets are one of netserve's eight lines, every line one client's.
    python3 - "$tmp" <<'EOF' || fail "the clients' counts and netserve's do not reconcile"
import json, re, sys
d = sys.argv[1]
clients = sorted((json.load(open(f"{d}/c{i}.json"))['end']['sum_received']['packets'],
                  json.load(open(f"{d}/c{i}.json"))['end']['sum_received']['bytes']) for i in range(1, 9))
logged = sorted((int(a), int(b)) for a, b in re.findall(r'received packets=(\d+) bytes=(\d+) .* client=iperf3 ', open(f"{d}/serve.log").read()))
print("clients:", clients)
print("netserve:", logged)
sys.exit(clients != logged or len(clients) != 8)
EOF
  fi
  ;;
hello_flood)
  start_netserve
  # Before the fix the port kept the last 256 hellos whoever sent them: a flood from one address pushed
  # every real stream's hello out before its session took it ("did not announce itself within 10 s").
  cpu_before=$(cpu_seconds "$server")
  python3 - "$port" 9 > "$tmp/flood.out" 2>&1 <<'EOF' &
import socket, struct, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
hello = struct.pack("=I", 0x36373839)  # iperf3's UDP_CONNECT_MSG, in the host's byte order
socks = []
for _ in range(8):  # eight source ports: no single flow to filter
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.2", 0))
    socks.append(s)
sent, begin = 0, time.monotonic()
while time.monotonic() - begin < seconds:
    for s in socks:
        for _ in range(64):
            try:
                s.sendto(hello, ("127.0.0.1", port))
                sent += 1
            except OSError:
                pass
print(f"flood: {sent} hellos from 127.0.0.2 in {time.monotonic() - begin:.1f} s ({sent / seconds / 1000:.0f} kpps)")
EOF
  flood=$!
  sleep 1
  client flood1 -u -b 10m -l 1400 -t 2
  compare flood1 1 "j['end']['sum_received']['packets'] == l['packets']"
  client flood2 -u -b 10m -l 1400 -t 2 -P 2
  compare flood2 2 "j['end']['sum_received']['packets'] == l['packets']"
  wait $flood
  cat "$tmp/flood.out"
  cpu_after=$(cpu_seconds "$server")
  echo "netserve's CPU over the flood: $(python3 -c "print(round($cpu_after - $cpu_before, 2))") s"
  ;;
dup_cookie)
  start_netserve --max-tests-per-port 2 --client-share 1
  # Before the fix a second session with the cookie of one still in its parameter exchange was served: its
  # test took no entry of its own on the port (the first's held the cookie), so the port counted one test
  # where two ran, and a third from another address was let in.
  python3 - "$port" <<'EOF' || fail "a duplicate cookie was served, or the port ran more than 2 tests"
import json, socket, struct, sys
port = int(sys.argv[1])
names = {9: "PARAM_EXCHANGE", 10: "CREATE_STREAMS", -1: "ACCESS_DENIED", -2: "SERVER_ERROR"}
def state(s):
    b = s.recv(1)
    return struct.unpack("b", b)[0] if b else None
def hello(cookie, source):
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    s.sendall(cookie.encode() + b"\0")
    return s, state(s)
def params(s):
    p = json.dumps({"tcp": True, "time": 5, "parallel": 1, "len": 131072, "client_version": "3.12"}).encode()
    s.sendall(struct.pack(">I", len(p)) + p)
    return state(s)
x, y, z = "a" * 36, "b" * 36, "c" * 36
a, sa = hello(x, "127.0.0.1")
b, sb = hello(x, "127.0.0.1")  # the same cookie while the first session exchanges its parameters
print("first session:", names.get(sa, sa), "- second with its cookie:", names.get(sb, sb))
ran = [params(a)]
if sb == 9:
    ran.append(params(b))
for cookie, source in ((y, "127.0.0.2"), (z, "127.0.0.3")):
    c, sc = hello(cookie, source)
    ran.append(params(c) if sc == 9 else sc)
print("tests:", [names.get(s, s) for s in ran])
running = ran.count(10)
print(f"{running} tests running at once on a port of 2 slots")
sys.exit(sb != -1 or running != 2)
EOF
  grep -q "iperf3 data connection from 127.0.0.1 refused: .*cookie" "$tmp/serve.log" || fail "netserve did not log why"
  ;;
*)
  echo "unknown case $case_name"
  exit 2
  ;;
esac
[ "$fails" -eq 0 ] || { echo "--- netserve's log"; cat "$tmp/serve.log"; }
exit $fails
